package central

import "github.com/browsergate/browsergate/evidence"

// ShippedOf is what s knows the central store holds.
func ShippedOf(s *Shipper) *evidence.Shipped { return s.shipped }
