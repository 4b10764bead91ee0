package anchor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/transparency-dev/tessera/api/layout"
)

// BucketSource reads the copy of the log that Mirror keeps in an S3
// bucket, read-only: the auditor's Source when it trusts nothing the
// anchorer runs.
type BucketSource struct {
	Client *s3.Client
	Bucket string
	// Prefix is put before every tlog-tiles path, as MirrorConfig.Prefix.
	Prefix string
}

// ReadCheckpoint reads the current version of the checkpoint.
func (b BucketSource) ReadCheckpoint(ctx context.Context) ([]byte, error) {
	return getObject(ctx, b.Client, b.Bucket, b.Prefix+layout.CheckpointPath, "")
}

// ReadTile reads a tile.
func (b BucketSource) ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error) {
	return getObject(ctx, b.Client, b.Bucket, b.Prefix+layout.TilePath(level, index, p), "")
}

// ReadEntryBundle reads an entry bundle.
func (b BucketSource) ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error) {
	return getObject(ctx, b.Client, b.Bucket, b.Prefix+layout.EntriesPath(index, p), "")
}

// Checkpoints reads every version of the checkpoint the bucket keeps,
// oldest first as S3 lists them newest first: each one the anchorer ever
// mirrored, locked. Given to Audit as AuditOptions.Kept, they make the
// current checkpoint answer for every earlier one, so that putting an old
// version back on top, or a rewritten log, shows even to an auditor who
// kept nothing.
func (b BucketSource) Checkpoints(ctx context.Context) ([][]byte, error) {
	key := b.Prefix + layout.CheckpointPath
	var ids []string
	p := s3.NewListObjectVersionsPaginator(b.Client, &s3.ListObjectVersionsInput{Bucket: &b.Bucket, Prefix: &key})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the versions of s3://%s/%s: %w", b.Bucket, key, err)
		}
		for _, v := range page.Versions {
			if v.Key != nil && *v.Key == key && v.VersionId != nil {
				ids = append(ids, *v.VersionId)
			}
		}
	}
	out := make([][]byte, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		raw, err := getObject(ctx, b.Client, b.Bucket, key, ids[i])
		if err != nil {
			return nil, fmt.Errorf("checkpoint version %s: %w", ids[i], err)
		}
		out = append(out, raw)
	}
	return out, nil
}
