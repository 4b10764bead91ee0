package anchor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/transparency-dev/tessera/api/layout"
)

// S3Config says how to reach an S3 service with static credentials.
type S3Config struct {
	// Endpoint is the service's base URL (https://s3.eu-west-1.amazonaws.com,
	// http://127.0.0.1:7070); empty means AWS's endpoint for Region.
	Endpoint string
	// Region is the region requests are signed for (us-east-1 if empty).
	Region string
	// AccessKey and SecretKey are the credentials.
	AccessKey, SecretKey string
	// VirtualHosted addresses buckets as bucket.host instead of host/bucket
	// (path style, which gateways such as versitygw need).
	VirtualHosted bool
	// ResponseTimeout bounds the wait for a response's headers and for
	// each read of its body: a service that accepts a request and never
	// answers fails the call (after the SDK's retries) instead of holding
	// it. Zero means DefaultS3ResponseTimeout.
	ResponseTimeout time.Duration
}

// Time limits of the S3 client's connections.
const (
	// DefaultS3ResponseTimeout is S3Config.ResponseTimeout's default.
	DefaultS3ResponseTimeout = 30 * time.Second
	// S3DialTimeout and S3TLSTimeout bound connecting and the TLS
	// handshake.
	S3DialTimeout = 10 * time.Second
	S3TLSTimeout  = 10 * time.Second
)

// NewS3Client returns an S3 client for cfg.
func NewS3Client(cfg S3Config) *s3.Client {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	creds := aws.Credentials{AccessKeyID: cfg.AccessKey, SecretAccessKey: cfg.SecretKey, Source: "browsergate anchor"}
	wait := cfg.ResponseTimeout
	if wait <= 0 {
		wait = DefaultS3ResponseTimeout
	}
	client := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = S3DialTimeout }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.TLSHandshakeTimeout = S3TLSTimeout
			tr.ResponseHeaderTimeout = wait
		}).
		WithReadTimeout(wait)
	return s3.New(s3.Options{
		HTTPClient:   client,
		Region:       region,
		BaseEndpoint: optional(cfg.Endpoint),
		UsePathStyle: !cfg.VirtualHosted,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
	})
}

// optional is nil for "", else a pointer to s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// EnsureBucket creates bucket with Object Lock enabled (which turns
// versioning on), unless it exists, and checks that it has both: an
// object written with a retention there can then be neither deleted nor
// overwritten in place before its retention ends (ErrBucketNotLocked
// otherwise). For tests and for operators setting up the copy.
func EnsureBucket(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket, ObjectLockEnabledForBucket: aws.Bool(true)})
	if err != nil && !isCode(err, "BucketAlreadyOwnedByYou") {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	lock, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &bucket})
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBucketNotLocked, bucket, err)
	}
	if lock.ObjectLockConfiguration == nil || lock.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled {
		return fmt.Errorf("%w: %s", ErrBucketNotLocked, bucket)
	}
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &bucket})
	if err != nil {
		return fmt.Errorf("%w: %s: versioning: %v", ErrBucketNotLocked, bucket, err)
	}
	if v.Status != types.BucketVersioningStatusEnabled {
		return fmt.Errorf("%w: %s: versioning is %q", ErrBucketNotLocked, bucket, v.Status)
	}
	return nil
}

// isCode says whether err is an S3 error with one of codes.
func isCode(err error, codes ...string) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	for _, c := range codes {
		if api.ErrorCode() == c {
			return true
		}
	}
	return false
}

// The most an object of the copy may take: the checkpoint (a signed note
// of a few lines), a tile (256 hashes, and slack), an entry bundle (256
// entries of a 16-bit length and at most 65535 bytes each).
const (
	MaxCheckpointBytes  = 16 << 10
	MaxTileBytes        = layout.TileWidth*hashSize + 1<<10
	MaxEntryBundleBytes = layout.EntryBundleWidth * (2 + MaxLeaf)
)

// ErrObjectTooLarge is an object of the bucket larger than its kind may
// be (MaxCheckpointBytes, MaxTileBytes, MaxEntryBundleBytes).
var ErrObjectTooLarge = errors.New("anchor: object of the copy is larger than its kind may be")

// objectLimit is the most the object at key (a tlog-tiles path after a
// prefix) may take.
func objectLimit(key string) int64 {
	switch {
	case strings.Contains(key, "tile/entries/"):
		return MaxEntryBundleBytes
	case strings.Contains(key, "tile/"):
		return MaxTileBytes
	}
	return MaxCheckpointBytes
}

// getObject reads an object (its current version, or versionID's),
// wrapping fs.ErrNotExist when there is none. An object larger than its
// kind may be (objectLimit) is an error naming it: a version put there
// by anyone who may write the bucket cannot exhaust the reader's memory.
func getObject(ctx context.Context, c *s3.Client, bucket, key, versionID string) ([]byte, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: optional(versionID)})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) || isCode(err, "NoSuchKey", "NotFound", "NoSuchVersion") {
			return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
	}
	defer out.Body.Close()
	limit := objectLimit(key)
	if out.ContentLength != nil && *out.ContentLength > limit {
		return nil, fmt.Errorf("%w: s3://%s/%s holds %d bytes, more than %d", ErrObjectTooLarge, bucket, key, *out.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: s3://%s/%s holds more than %d bytes", ErrObjectTooLarge, bucket, key, limit)
	}
	return b, nil
}
