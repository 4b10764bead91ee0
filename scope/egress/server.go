package egress

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// serverIdleTimeout closes a kept-alive client connection on which no
// request has come for this long.
const serverIdleTimeout = 2 * time.Minute

// serverBounds are the HTTP server settings of a proxy listener, a
// Proxy's own (Listen) or a Gateway's: the same bounds on request headers,
// in size and in read time (slowloris), and the same idle timeout,
// wherever a browser connects.
type serverBounds struct {
	ReadHeaderTimeout time.Duration
	MaxHeaderBytes    int
	Logger            *slog.Logger
}

// serve starts an HTTP server for h on ln in the background. Every request's
// context descends from base, so cancelling base ends every request in
// flight. The server's goroutine and each connection's are counted in
// serving (a connection until it closes or is hijacked: a hijacked one's
// handler is the caller's to count), so that waiting on serving after Close
// on the returned server also waits for a request that was read just before
// Close and is still being refused.
func (l serverBounds) serve(ln net.Listener, h http.Handler, base context.Context, serving *sync.WaitGroup, what string) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		IdleTimeout:       serverIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(l.Logger.Handler(), slog.LevelDebug),
		// StateNew is reported by the Serve goroutine, which is itself
		// counted, so the Add never races a Wait that could see zero.
		ConnState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				serving.Add(1)
			case http.StateClosed, http.StateHijacked:
				serving.Done()
			}
		},
	}
	serving.Add(1)
	go func() {
		defer serving.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.Logger.Error(what+" stopped serving", slog.Any("error", err))
		}
	}()
	return srv
}
