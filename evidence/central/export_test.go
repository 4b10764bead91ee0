package central

import (
	"context"

	"github.com/browsergate/browsergate/evidence"
)

// ShippedOf is what s knows the central store holds.
func ShippedOf(s *Shipper) *evidence.Shipped { return s.shipped }

// TakeOverForTest is a.takeOver, on the pool.
func TakeOverForTest(ctx context.Context, a *Anchorer) error {
	return a.takeOver(ctx, a.Store.pool, DefaultAnchorRoundWait)
}

// CheckLogForTest is a.checkLog, on the pool.
func CheckLogForTest(ctx context.Context, a *Anchorer) error { return a.checkLog(ctx, a.Store.pool) }
