package anchor_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/internal/testkit/s3lab"
)

// testRetention is how long the tests' objects are locked: the gateway's
// directory is removed with the test's, whatever the lock says.
const testRetention = 24 * time.Hour

// lockedBucket starts versitygw, creates a bucket with Object Lock and
// returns a client for it.
func lockedBucket(t testing.TB, bucket string) *s3.Client {
	t.Helper()
	lab := s3lab.Start(t)
	c := anchor.NewS3Client(anchor.S3Config{Endpoint: lab.Endpoint, Region: lab.Region, AccessKey: lab.AccessKey, SecretKey: lab.SecretKey})
	if err := anchor.EnsureBucket(context.Background(), c, bucket); err != nil {
		t.Fatal(err)
	}
	return c
}

// testBucket is the bucket the tests mirror to.
const testBucket = "fleet-log"

// mirrorSetup starts versitygw with a locked testBucket, and opens a new
// log and a mirror of it to that bucket.
func mirrorSetup(t testing.TB) (*testLog, *s3.Client, *anchor.Mirror) {
	t.Helper()
	c := lockedBucket(t, testBucket)
	return openLog(t), c, newMirror(t, c, testBucket)
}

// syncOK mirrors src, failing t on an error.
func syncOK(t testing.TB, m *anchor.Mirror, src anchor.Source) anchor.MirrorStats {
	t.Helper()
	stats, err := m.Sync(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// newMirror returns a Mirror to bucket holding objects for testRetention.
func newMirror(t testing.TB, c *s3.Client, bucket string) *anchor.Mirror {
	t.Helper()
	m, err := anchor.NewMirror(anchor.MirrorConfig{Client: c, Bucket: bucket, Retention: testRetention})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// objectVersion is one version of one object of a bucket.
type objectVersion struct{ key, id string }

// versions lists every version of every object of bucket.
func versions(t *testing.T, c *s3.Client, bucket string) []objectVersion {
	t.Helper()
	var out []objectVersion
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Versions {
			out = append(out, objectVersion{*v.Key, *v.VersionId})
		}
	}
	return out
}

// requireLocked fails t unless every version of every object of bucket
// is held in compliance mode until at least testRetention from since.
func requireLocked(t *testing.T, c *s3.Client, bucket string, since time.Time) {
	t.Helper()
	all := versions(t, c, bucket)
	if len(all) == 0 {
		t.Fatal("the bucket holds no object")
	}
	for _, v := range all {
		r, err := c.GetObjectRetention(context.Background(), &s3.GetObjectRetentionInput{Bucket: &bucket, Key: &v.key, VersionId: &v.id})
		if err != nil {
			t.Errorf("%s (version %s): no retention: %v", v.key, v.id, err)
			continue
		}
		if r.Retention == nil || r.Retention.Mode != types.ObjectLockRetentionModeCompliance {
			t.Errorf("%s (version %s): retention %+v, want compliance mode", v.key, v.id, r.Retention)
			continue
		}
		if until := r.Retention.RetainUntilDate; until == nil || until.Before(since.Add(testRetention).Add(-time.Second)) {
			t.Errorf("%s (version %s): retained until %v, want at least %v", v.key, v.id, until, since.Add(testRetention))
		}
	}
}

// putObject writes body to key as any writer of the bucket could, with
// no retention of its own.
func putObject(t *testing.T, c *s3.Client, bucket, key string, body []byte) string {
	t.Helper()
	out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	if out.VersionId == nil {
		t.Fatalf("put %s: no version id (is versioning on?)", key)
	}
	return *out.VersionId
}
