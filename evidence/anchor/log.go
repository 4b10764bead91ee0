package anchor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
)

// Defaults of Config.
const (
	// DefaultCheckpointInterval is how often a new checkpoint is signed
	// while leaves arrive: Tessera's POSIX driver allows no less than
	// 100 ms, and a leaf is anchored only once a checkpoint covers it.
	DefaultCheckpointInterval = time.Second
	// DefaultBatchMaxSize is how many leaves are sequenced together at most.
	DefaultBatchMaxSize = 256
	// DefaultBatchMaxAge is how long a leaf waits for others to join its
	// batch: short, since the anchorer's Append waits for integration.
	DefaultBatchMaxAge = 10 * time.Millisecond
	// MaxCheckpointInterval is the longest CheckpointInterval: an
	// anchoring round waits at most 2 minutes for a checkpoint.
	MaxCheckpointInterval = time.Minute
)

// MaxLeaf is the largest leaf: a tlog-tiles entry's length is 16 bits.
const MaxLeaf = 1<<16 - 1

// Config configures Open.
type Config struct {
	// Dir is the log's directory (created if missing): checkpoint,
	// tile/… and tile/entries/… as tlog-tiles lays them out, and Tessera's
	// private .state/. Required.
	Dir string
	// Signer signs checkpoints: an Ed25519 note signer
	// (note.NewSigner of a key from note.GenerateKey). Its name is the
	// log's origin, the first line of every checkpoint. Required.
	Signer note.Signer
	// Origin, when set, must equal Signer.Name(): a guard against starting
	// the anchorer with another log's key.
	Origin string
	// CheckpointInterval is how often a checkpoint is signed while the log
	// grows; zero means DefaultCheckpointInterval, and it may not be less
	// than 100 ms nor more than MaxCheckpointInterval.
	CheckpointInterval time.Duration
	// BatchMaxSize and BatchMaxAge bound a sequencing batch; zero means
	// DefaultBatchMaxSize and DefaultBatchMaxAge.
	BatchMaxSize uint
	BatchMaxAge  time.Duration
	// Logger says what a restore removed; nil means slog.Default().
	Logger *slog.Logger
}

// Log is an open transparency log. Append and Checkpoint may be called
// from several goroutines; one process at a time should hold a directory
// (Tessera's POSIX driver serialises writers with a file lock, but the
// fleet elects one anchorer).
type Log struct {
	cfg    Config
	origin string

	// Tessera on the directory, replaced by a restore (under mu).
	appender *tessera.Appender
	shutdown func(context.Context) error
	reader   tessera.LogReader
	cancel   context.CancelFunc

	// now and rename are time.Now and os.Rename, but in tests.
	now    func() time.Time
	rename func(from, to string) error

	mu     sync.Mutex
	closed bool
	down   error  // why Tessera is not open on the directory (a restore)
	want   uint64 // a tree size that covers every leaf appended so far
}

// Open opens the log in cfg.Dir, creating it if it is new, and starts the
// background work that signs checkpoints. It refuses a directory whose
// checkpoint names another origin (ErrOtherLog).
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: no Dir", ErrConfig)
	}
	if cfg.Signer == nil {
		return nil, fmt.Errorf("%w: no Signer", ErrConfig)
	}
	// A restore builds DIR.restoring beside DIR: "/x/log/" must be /x/log.
	cfg.Dir = filepath.Clean(cfg.Dir)
	origin := cfg.Signer.Name()
	if cfg.Origin != "" && cfg.Origin != origin {
		return nil, fmt.Errorf("%w: Origin %q is not the signer's name %q", ErrConfig, cfg.Origin, origin)
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.CheckpointInterval < 100*time.Millisecond {
		return nil, fmt.Errorf("%w: CheckpointInterval %v is less than 100ms", ErrConfig, cfg.CheckpointInterval)
	}
	if cfg.CheckpointInterval > MaxCheckpointInterval {
		return nil, fmt.Errorf("%w: CheckpointInterval %v is more than %v: an anchoring round waits at most 2 minutes for a checkpoint", ErrConfig, cfg.CheckpointInterval, MaxCheckpointInterval)
	}
	if cfg.BatchMaxSize == 0 {
		cfg.BatchMaxSize = DefaultBatchMaxSize
	}
	if cfg.BatchMaxAge == 0 {
		cfg.BatchMaxAge = DefaultBatchMaxAge
	}
	if err := checkOrigin(cfg.Dir, origin); err != nil {
		return nil, err
	}
	l := &Log{cfg: cfg, origin: origin, now: time.Now, rename: os.Rename}
	if err := l.start(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// start opens Tessera on the log's directory: its appender, its reader
// and the background work that signs checkpoints.
func (l *Log) start(ctx context.Context) error {
	cfg := l.cfg
	if err := unfinished(cfg.Dir); err != nil {
		return err
	}
	// Tessera refuses a path that is a symbolic link: it is opened on the
	// directory the link names (which a restore replaces, not the link).
	driver, err := posix.New(ctx, posix.Config{Path: realDir(cfg.Dir)})
	if err != nil {
		return fmt.Errorf("open the log in %s: %w", cfg.Dir, err)
	}
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(cfg.Signer).
		WithCheckpointInterval(cfg.CheckpointInterval).
		WithBatching(cfg.BatchMaxSize, cfg.BatchMaxAge)
	// The background work (sequencing, signing, removing partial tiles
	// that full ones replaced) lives until Close, not as long as ctx.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	appender, shutdown, reader, err := tessera.NewAppender(bg, driver, opts)
	if err != nil {
		cancel()
		return fmt.Errorf("open the log in %s: %w", cfg.Dir, err)
	}
	size, err := reader.IntegratedSize(ctx)
	if err != nil {
		cancel()
		return fmt.Errorf("open the log in %s: %w", cfg.Dir, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appender, l.shutdown, l.reader, l.cancel = appender, shutdown, reader, cancel
	l.want, l.down = size, nil
	return nil
}

// stop waits until a checkpoint covers every leaf appended (at most ctx's
// deadline) and stops the background work, once.
func (l *Log) stop(ctx context.Context) error {
	l.mu.Lock()
	shutdown, cancel := l.shutdown, l.cancel
	l.shutdown, l.cancel = nil, nil
	l.mu.Unlock()
	if shutdown == nil {
		return nil
	}
	err := shutdown(ctx)
	cancel()
	return err
}

// open returns what Append and Checkpoint use, or why they cannot.
func (l *Log) open() (*tessera.Appender, tessera.LogReader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, nil, ErrClosed
	case l.down != nil:
		return nil, nil, fmt.Errorf("%w: %w", ErrNotOpen, l.down)
	}
	return l.appender, l.reader, nil
}

// checkOrigin refuses a directory whose checkpoint is another log's.
func checkOrigin(dir, origin string) error {
	raw, err := os.ReadFile(filepath.Join(dir, layout.CheckpointPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open the log in %s: %w", dir, err)
	}
	cp, err := parseUnverified(raw)
	if err != nil {
		return fmt.Errorf("open the log in %s: %w", dir, err)
	}
	if cp.Origin != origin {
		return fmt.Errorf("%w: %s holds %q, the signer is %q", ErrOtherLog, dir, cp.Origin, origin)
	}
	return nil
}

// Size is how many leaves the log holds: sequenced and integrated into
// the tree on its directory, whether or not a checkpoint covers them yet.
func (l *Log) Size(ctx context.Context) (uint64, error) {
	_, reader, err := l.open()
	if err != nil {
		return 0, err
	}
	return reader.IntegratedSize(ctx)
}

// Origin is the log's origin: the signer's name, the first line of every
// checkpoint.
func (l *Log) Origin() string { return l.origin }

// logger is where the log says what it did.
func (l *Log) logger() *slog.Logger {
	if l.cfg.Logger != nil {
		return l.cfg.Logger
	}
	return slog.Default()
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.cfg.Dir }

// Append adds leaves to the log and returns each one's index, in the
// order given, once every one of them is sequenced and integrated into
// the tree on disk (written with O_SYNC and the directory synced). A
// leaf is anchored once a checkpoint covers it: Checkpoint waits for one.
// On an error some leaves may have been added: an index is assigned once
// and for all, so the caller appends them again only if it keeps no
// index for them (an index returned is never taken back). A leaf larger
// than 65535 bytes fails the call before any leaf is added.
func (l *Log) Append(ctx context.Context, leaves [][]byte) ([]uint64, error) {
	appender, _, err := l.open()
	if err != nil {
		return nil, err
	}
	for i, leaf := range leaves {
		if len(leaf) > MaxLeaf {
			return nil, fmt.Errorf("append leaf %d: %d bytes, more than a tlog-tiles entry holds (%d)", i, len(leaf), MaxLeaf)
		}
	}
	futures := make([]tessera.IndexFuture, len(leaves))
	for i, leaf := range leaves {
		futures[i] = appender.Add(ctx, tessera.NewEntry(leaf))
	}
	indices := make([]uint64, len(leaves))
	var top uint64
	for i, f := range futures {
		idx, err := f()
		if err != nil {
			return nil, fmt.Errorf("append leaf %d of %d: %w", i, len(leaves), err)
		}
		indices[i] = idx.Index
		top = max(top, idx.Index+1)
	}
	l.mu.Lock()
	l.want = max(l.want, top)
	l.mu.Unlock()
	return indices, nil
}

// Checkpoint returns the signed checkpoint (a note: origin, size, root
// hash, signature) once the published one covers every leaf Append has
// returned so far, waiting for the next signing if need be (up to
// CheckpointInterval).
func (l *Log) Checkpoint(ctx context.Context) ([]byte, error) {
	_, reader, err := l.open()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	want := l.want
	l.mu.Unlock()
	for {
		raw, err := reader.ReadCheckpoint(ctx)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read the checkpoint: %w", err)
		}
		if err == nil {
			cp, err := parseUnverified(raw)
			if err != nil {
				return nil, err
			}
			if cp.Size >= want {
				return raw, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for a checkpoint of size %d: %w", want, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Source is the log's directory read as an auditor or the mirror reads
// it: each file exactly as it is (Tessera's own reader hands out a full
// tile for a partial one it removed, which is not what the partial's path
// holds).
func (l *Log) Source() Source { return DirSource(l.cfg.Dir) }

// Close waits until a checkpoint covers every leaf appended (at most
// ctx's deadline, or Tessera's one-minute shutdown timeout), then stops
// the background work. Append and Checkpoint fail after it.
func (l *Log) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	if err := l.stop(ctx); err != nil {
		return fmt.Errorf("close the log in %s: %w", l.cfg.Dir, err)
	}
	return nil
}
