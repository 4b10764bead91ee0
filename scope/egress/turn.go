package egress

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
)

// dialTurnKey is the context key of a dial's turn (WithDialTurn).
type dialTurnKey struct{}

// WithDialTurn returns a context that carries wait: DialContext, given
// that context, calls wait with the one address it is about to dial, once
// the gate has judged it and before it connects. A wait that fails refuses
// the dial (rule RuleTurn), and no connection to the host is opened. A
// client that spaces its requests to each address (the browserless
// engine's requests_per_second_per_host) waits here, so that a request
// refused its turn never reaches the host, not even as a TCP handshake.
// The wait runs on the dialling goroutine, which net/http detaches from
// the request's cancellation: wait bounds itself.
func WithDialTurn(ctx context.Context, wait func(netip.Addr) error) context.Context {
	return context.WithValue(ctx, dialTurnKey{}, wait)
}

// takeDialTurn waits for the dial to ap its turn, when ctx carries a wait.
func takeDialTurn(ctx context.Context, ap netip.AddrPort) *refusal {
	wait, ok := ctx.Value(dialTurnKey{}).(func(netip.Addr) error)
	if !ok || wait == nil {
		return nil
	}
	if err := wait(ap.Addr()); err != nil {
		return &refusal{status: http.StatusTooManyRequests, rule: RuleTurn,
			reason: fmt.Sprintf("no turn to connect to %s: %v", ap, err)}
	}
	return nil
}
