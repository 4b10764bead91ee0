package central

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// Shipper copies a daemon's evidence file to the central store as it
// grows: it wakes on every append (evidence.Store.Changed), ships what is
// new in batches, and retries with a growing pause while the store cannot
// take it. Acknowledge waits until the store holds a record: a daemon
// that replies only then (--evidence-ack central) loses nothing it
// acknowledged even if its disk is lost.
type Shipper struct {
	local   *evidence.Store
	central *Store
	replica string
	logger  *slog.Logger
	// MaxBatch bounds the records of one batch (DefaultMaxBatch).
	MaxBatch int
	// AckTimeout bounds Acknowledge's wait (DefaultAckTimeout).
	AckTimeout time.Duration

	mu       sync.Mutex
	shipped  *evidence.Shipped
	progress chan struct{} // closed, and replaced, after each attempt
	lastErr  error
	// behind is since when the file has held what the store lacks (zero:
	// it holds nothing more); failures counts the attempts that failed.
	behind   time.Time
	failures int
}

// Health is how the shipper stands: for how long the file has held
// records the store lacks (0: none), and how many attempts failed since
// it started.
func (s *Shipper) Health() (behind time.Duration, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.behind.IsZero() {
		behind = time.Since(s.behind)
	}
	return behind, s.failures
}

// Defaults of a Shipper.
const (
	DefaultMaxBatch   = 2000
	DefaultAckTimeout = 10 * time.Second
	maxRetryPause     = 5 * time.Second
	batchTimeout      = 30 * time.Second
)

// NewShipper starts from what the central store holds of local's log.
func NewShipper(ctx context.Context, local *evidence.Store, central *Store, replica string, logger *slog.Logger) (*Shipper, error) {
	if local.LogID() == "" {
		return nil, errors.New("ship evidence: the evidence file has no log id")
	}
	sh, err := central.Shipped(ctx, local.LogID())
	if err != nil {
		return nil, err
	}
	if err := local.CheckShipped(sh); err != nil {
		return nil, fmt.Errorf("ship evidence of log %s: %w; start on a new evidence file (a new log)", local.LogID(), err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Shipper{local: local, central: central, replica: replica, logger: logger,
		MaxBatch: DefaultMaxBatch, AckTimeout: DefaultAckTimeout, shipped: sh, progress: make(chan struct{})}, nil
}

// Run ships until ctx ends.
func (s *Shipper) Run(ctx context.Context) {
	pause := time.Duration(0)
	tick := time.NewTicker(time.Second) // a wake-up missed is made up for
	defer tick.Stop()
	for {
		err := s.Flush(ctx)
		switch {
		case err == nil:
			pause = 0
		case ctx.Err() != nil:
			return
		default:
			pause = min(max(2*pause, 100*time.Millisecond), maxRetryPause)
			s.logger.Error("evidence not shipped to the central store; retrying", "error", err, "in", pause)
		}
		wait := tick.C
		var retry <-chan time.Time
		if pause > 0 {
			retry, wait = time.After(pause), nil
		}
		select {
		case <-ctx.Done():
			return
		case <-s.local.Changed():
		case <-wait:
		case <-retry:
		}
	}
}

// Flush ships everything the file holds now, batch by batch.
func (s *Shipper) Flush(ctx context.Context) error {
	s.mu.Lock()
	if s.behind.IsZero() {
		s.behind = time.Now()
	}
	s.mu.Unlock()
	for {
		b, err := s.local.NextBatch(s.shipped, s.MaxBatch)
		if err == nil && b.Empty(s.shipped) {
			s.mu.Lock()
			s.behind = time.Time{}
			s.mu.Unlock()
			s.done(nil)
			return nil
		}
		if err == nil && !b.Complete && len(b.Records) == 0 {
			err = fmt.Errorf("ship evidence: a batch of log %s made no progress", b.LogID)
		}
		if err == nil {
			bctx, cancel := context.WithTimeout(ctx, batchTimeout)
			err = s.central.Ship(bctx, s.replica, b)
			cancel()
		}
		if err != nil {
			s.done(err)
			return err
		}
		s.mu.Lock()
		s.shipped.Apply(b)
		if b.Complete {
			s.behind = time.Time{}
		}
		s.mu.Unlock()
		s.done(nil)
		if b.Complete {
			return nil
		}
	}
}

// done wakes the Acknowledge calls waiting, with the attempt's error.
func (s *Shipper) done(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	if err != nil {
		s.failures++
	}
	close(s.progress)
	s.progress = make(chan struct{})
}

// Acknowledge waits until the central store holds record seq of session
// and a head of the session that covers it, up to AckTimeout: it is what
// a daemon that replies only once the central store has the record gives
// evidence.Store.SetAcknowledge.
func (s *Shipper) Acknowledge(session string, seq uint64) error {
	deadline := time.NewTimer(s.AckTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, next, lastErr := s.shipped.UpToDate(session, seq), s.progress, s.lastErr
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-next:
		case <-deadline.C:
			if lastErr != nil {
				return fmt.Errorf("the central store did not take it within %s: %w", s.AckTimeout, lastErr)
			}
			return fmt.Errorf("the central store did not take it within %s", s.AckTimeout)
		}
	}
}
