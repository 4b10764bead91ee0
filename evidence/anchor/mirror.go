package anchor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/transparency-dev/tessera/api/layout"
)

// DefaultMirrorWorkers is how many objects Mirror writes at once.
const DefaultMirrorWorkers = 8

// MirrorConfig configures NewMirror.
type MirrorConfig struct {
	// Client reaches the S3 service (NewS3Client). Required.
	Client *s3.Client
	// Bucket is a bucket with Object Lock enabled (EnsureBucket). Required.
	Bucket string
	// Prefix is put before every tlog-tiles path ("fleet-log/"); empty
	// puts the log at the bucket's root.
	Prefix string
	// Retention is how long each object is held in compliance mode from
	// the moment it is written: no account, the bucket's owner and the
	// service's root included, can delete that version or shorten its
	// retention before then. Required.
	Retention time.Duration
	// Workers is how many objects are written at once; zero means
	// DefaultMirrorWorkers.
	Workers int
	// Now is the clock retentions are counted from; nil means time.Now.
	Now func() time.Time
}

// Mirror copies a log to an S3 bucket with Object Lock: every entry
// bundle and tile, then the checkpoint, each object written with a
// compliance-mode retention. It copies only what changed since the
// bucket's checkpoint: full tiles and bundles never change, partial ones
// grow, and the checkpoint is overwritten (the bucket is versioned, so
// each version of it stays, locked).
type Mirror struct {
	cfg MirrorConfig

	mu     sync.Mutex
	bucket *Checkpoint // the bucket's checkpoint, once known
}

// MirrorStats says what one Sync wrote.
type MirrorStats struct {
	// Size is the size of the checkpoint the bucket now has.
	Size uint64
	// Objects and Bytes count the objects written.
	Objects int
	Bytes   int64
}

// NewMirror returns a Mirror for cfg.
func NewMirror(cfg MirrorConfig) (*Mirror, error) {
	if cfg.Client == nil || cfg.Bucket == "" {
		return nil, fmt.Errorf("%w: a mirror needs a Client and a Bucket", ErrConfig)
	}
	if cfg.Retention <= 0 {
		return nil, fmt.Errorf("%w: a mirror needs a Retention", ErrConfig)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultMirrorWorkers
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Mirror{cfg: cfg}, nil
}

// Sync copies src's current checkpoint and what it covers that the bucket
// lacks: the entry bundles and tiles first, the checkpoint last, so that
// the bucket's checkpoint always has every resource it needs there. It
// refuses to copy a log that is not an extension of the bucket's copy
// (ErrMirrorAhead: the log was rolled back or replaced) or is another
// log (ErrOtherLog). One Sync at a time runs.
func (m *Mirror) Sync(ctx context.Context, src Source) (MirrorStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return MirrorStats{}, fmt.Errorf("mirror: read the log's checkpoint: %w", err)
	}
	cur, err := parseUnverified(raw)
	if err != nil {
		return MirrorStats{}, fmt.Errorf("mirror: %w", err)
	}
	if m.bucket == nil {
		if err := m.readBucket(ctx); err != nil {
			return MirrorStats{}, err
		}
	}
	have := *m.bucket
	if have.Raw != nil {
		if have.Origin != cur.Origin {
			return MirrorStats{}, fmt.Errorf("%w: s3://%s/%s holds %q, the log is %q", ErrOtherLog, m.cfg.Bucket, m.key(layout.CheckpointPath), have.Origin, cur.Origin)
		}
		if err := consistent(ctx, src, have, cur); err != nil {
			return MirrorStats{}, fmt.Errorf("%w: the bucket has the %s, the log the %s: %w", ErrMirrorAhead, have, cur, err)
		}
		if bytes.Equal(have.Raw, raw) {
			return MirrorStats{Size: cur.Size}, nil
		}
	}
	stats := MirrorStats{Size: cur.Size}
	jobs := changed(have.Size, cur.Size)
	if err := m.copyAll(ctx, src, jobs, &stats); err != nil {
		return stats, err
	}
	// The checkpoint is put only over the one this mirror last saw there:
	// one another writer put meanwhile (an anchorer that took over) is
	// not overwritten with a history it may not extend.
	now, err := getObject(ctx, m.cfg.Client, m.cfg.Bucket, m.key(layout.CheckpointPath), "")
	if errors.Is(err, fs.ErrNotExist) {
		now, err = nil, nil
	}
	if err != nil {
		return stats, fmt.Errorf("mirror: read the bucket's checkpoint again: %w", err)
	}
	if !bytes.Equal(now, have.Raw) {
		m.bucket = nil // read anew next time
		return stats, fmt.Errorf("%w: s3://%s/%s changed while this mirror copied (another anchorer wrote it); its checkpoint is not put", ErrBucketMoved, m.cfg.Bucket, m.key(layout.CheckpointPath))
	}
	if err := m.put(ctx, layout.CheckpointPath, raw); err != nil {
		return stats, err
	}
	stats.Objects++
	stats.Bytes += int64(len(raw))
	m.bucket = &cur
	return stats, nil
}

// Source reads the bucket's copy of the log (Log.Restore's source).
func (m *Mirror) Source() BucketSource {
	return BucketSource{Client: m.cfg.Client, Bucket: m.cfg.Bucket, Prefix: m.cfg.Prefix}
}

// Forget drops what the mirror knows of the bucket's checkpoint: the next
// Sync reads it from the bucket again. An anchorer that takes over calls
// it, since another may have mirrored in between.
func (m *Mirror) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bucket = nil
}

// readBucket learns the bucket's checkpoint (none: an empty bucket).
func (m *Mirror) readBucket(ctx context.Context) error {
	raw, err := getObject(ctx, m.cfg.Client, m.cfg.Bucket, m.key(layout.CheckpointPath), "")
	if errors.Is(err, fs.ErrNotExist) {
		m.bucket = &Checkpoint{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("mirror: read the bucket's checkpoint: %w", err)
	}
	cp, err := parseUnverified(raw)
	if err != nil {
		return fmt.Errorf("mirror: the bucket's checkpoint: %w", err)
	}
	m.bucket = &cp
	return nil
}

// key is a resource's object key.
func (m *Mirror) key(path string) string { return m.cfg.Prefix + path }

// resource is one tile (level ≥ 0) or entry bundle (level -1) to copy.
type resource struct {
	level int64
	index uint64
	p     uint8
}

// path is the resource's tlog-tiles path.
func (r resource) path() string {
	if r.level < 0 {
		return layout.EntriesPath(r.index, r.p)
	}
	return layout.TilePath(uint64(r.level), r.index, r.p)
}

// changed lists the entry bundles and tiles of a tree of size to that a
// tree of size from did not have as they are now: the ones that were
// partial or missing at from. At each level the tiles before the first
// one that was partial at from are full in both and unchanged.
func changed(from, to uint64) []resource {
	var out []resource
	for i := from / layout.EntryBundleWidth; i*layout.EntryBundleWidth < to; i++ {
		p := layout.PartialTileSize(0, i, to)
		if p != 0 && p == layout.PartialTileSize(0, i, from) {
			continue
		}
		out = append(out, resource{level: -1, index: i, p: p})
	}
	for level := uint64(0); to>>(level*layout.TileHeight) > 0; level++ {
		nFrom, nTo := from>>(level*layout.TileHeight), to>>(level*layout.TileHeight)
		for i := nFrom / layout.TileWidth; i*layout.TileWidth < nTo; i++ {
			p := layout.PartialTileSize(level, i, to)
			if p != 0 && p == layout.PartialTileSize(level, i, from) {
				continue
			}
			out = append(out, resource{level: int64(level), index: i, p: p})
		}
	}
	return out
}

// copyAll reads each resource from src and writes it to the bucket, with
// cfg.Workers at once; it stops at the first error.
func (m *Mirror) copyAll(ctx context.Context, src Source, jobs []resource, stats *MirrorStats) error {
	var mu sync.Mutex
	return eachAtOnce(ctx, m.cfg.Workers, jobs, func(ctx context.Context, r resource) error {
		var b []byte
		var err error
		if r.level < 0 {
			b, err = readBundle(ctx, src, r.index, r.p)
		} else {
			b, err = readTile(ctx, src, uint64(r.level), r.index, r.p)
		}
		if err == nil {
			err = m.put(ctx, r.path(), b)
		}
		if err != nil {
			return fmt.Errorf("mirror %s: %w", r.path(), err)
		}
		mu.Lock()
		stats.Objects++
		stats.Bytes += int64(len(b))
		mu.Unlock()
		return nil
	})
}

// eachAtOnce calls do for each resource, workers at once; it stops at the
// first error, which it returns.
func eachAtOnce(ctx context.Context, workers int, jobs []resource, do func(context.Context, resource) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan resource)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r := range work {
				if err := do(ctx, r); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, r := range jobs {
		select {
		case work <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
}

// put writes one object held in compliance mode for cfg.Retention.
func (m *Mirror) put(ctx context.Context, path string, body []byte) error {
	until := m.cfg.Now().Add(m.cfg.Retention)
	key := m.key(path)
	_, err := m.cfg.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:                    &m.cfg.Bucket,
		Key:                       &key,
		Body:                      bytes.NewReader(body),
		ContentLength:             ptr(int64(len(body))),
		ObjectLockMode:            types.ObjectLockModeCompliance,
		ObjectLockRetainUntilDate: &until,
	})
	if err != nil {
		return fmt.Errorf("put s3://%s/%s: %w", m.cfg.Bucket, key, err)
	}
	return nil
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
