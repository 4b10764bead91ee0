package central

import (
	"context"

	"github.com/browsergate/browsergate/evidence"
)

// ShippedOf is what s knows the central store holds.
func ShippedOf(s *Shipper) *evidence.Shipped { return s.shipped }

// CheckLogForTest is a.checkLog, on the pool.
func CheckLogForTest(ctx context.Context, a *Anchorer) error { return a.checkLog(ctx, a.Store.pool) }
