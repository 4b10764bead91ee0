package anchor_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestObjectLockHoldsMirroredObjects tries, as the bucket's owner (the
// gateway's root account), to undo what the mirror wrote: deleting a
// locked version, deleting it while asking to bypass governance
// retention, shortening its retention and turning it into governance
// mode are refused, and the version stays readable; overwriting makes a
// new version and deleting without a version adds a delete marker, both
// leaving the old version readable. The same deletion of an object
// written without retention goes through: the refusals are the lock's.
func TestObjectLockHoldsMirroredObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const bucket = testBucket
	since := time.Now()
	l, c, m := mirrorSetup(t)
	l.appendAll(t, records("s1", 1, 300))
	syncOK(t, m, l.Source())
	requireLocked(t, c, bucket, since)

	key := "tile/entries/000"
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	id := *head.VersionId
	original := readVersion(t, c, bucket, key, id)
	stillThere := func(what string) {
		t.Helper()
		if got := readVersion(t, c, bucket, key, id); !bytes.Equal(got, original) {
			t.Errorf("after %s: version %s of %s changed", what, id, key)
		}
	}

	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: &key, VersionId: &id}); err == nil {
		t.Error("deleting a locked version went through")
	} else {
		t.Logf("refused: %v", err)
	}
	stillThere("a delete")
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: &key, VersionId: &id,
		BypassGovernanceRetention: aws.Bool(true)}); err == nil {
		t.Error("deleting a locked version with x-amz-bypass-governance-retention went through")
	} else {
		t.Logf("refused: %v", err)
	}
	stillThere("a delete bypassing governance retention")
	multi, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: &key, VersionId: &id}}}})
	if err == nil && len(multi.Errors) == 0 {
		t.Error("a multi-object delete of a locked version reported no error")
	}
	stillThere("a multi-object delete")

	shorter := time.Now().Add(time.Hour)
	if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String(bucket), Key: &key, VersionId: &id,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &shorter}}); err == nil {
		t.Error("shortening a compliance retention went through")
	} else {
		t.Logf("refused: %v", err)
	}
	if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String(bucket), Key: &key, VersionId: &id,
		BypassGovernanceRetention: aws.Bool(true),
		Retention:                 &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &shorter}}); err == nil {
		t.Error("turning a compliance retention into governance mode went through")
	} else {
		t.Logf("refused: %v", err)
	}
	requireLocked(t, c, bucket, since)

	newID := putObject(t, c, bucket, key, []byte("rewritten"))
	if newID == id {
		t.Fatal("an overwrite kept the version id")
	}
	stillThere("an overwrite")
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: &key}); err != nil {
		t.Fatalf("a delete without a version (a delete marker): %v", err)
	}
	stillThere("a delete marker")

	// The control: the same delete of a version that has no retention.
	plain := "not-locked"
	plainID := putObject(t, c, bucket, plain, []byte("x"))
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: &plain, VersionId: &plainID}); err != nil {
		t.Fatalf("deleting a version without retention: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: &plain, VersionId: &plainID}); err == nil {
		t.Fatal("a version without retention is still there after its delete: the refusals above prove nothing")
	}
}

// readVersion reads one version of an object.
func readVersion(t *testing.T, c *s3.Client, bucket, key, id string) []byte {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: &id})
	if err != nil {
		t.Fatalf("read %s version %s: %v", key, id, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
