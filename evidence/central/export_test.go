package central

import (
	"context"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// ShippedOf is what s knows the central store holds.
func ShippedOf(s *Shipper) *evidence.Shipped { return s.shipped }

// TakeOverForTest is a.takeOver, in a turn on a connection of the pool.
func TakeOverForTest(ctx context.Context, a *Anchorer) error {
	conn, err := a.Store.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	t := &turn{conn: conn, pool: a.Store.pool}
	defer t.end()
	return a.takeOver(ctx, t, DefaultAnchorRoundWait)
}

// CheckLogForTest is a.checkLog, on the pool.
func CheckLogForTest(ctx context.Context, a *Anchorer) error { return a.checkLog(ctx, a.Store.pool) }

// ClaimTurnForTest claims a's turn for d on a connection of the pool, as
// a holder of the lock does; end ends it and gives the connection back.
func ClaimTurnForTest(ctx context.Context, a *Anchorer, d time.Duration) (end func() error, err error) {
	conn, err := a.Store.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	t := &turn{conn: conn, pool: a.Store.pool}
	if err := t.claim(ctx, d); err != nil {
		conn.Release()
		return nil, err
	}
	return func() error { defer conn.Release(); return t.end() }, nil
}
