package executor

import (
	"fmt"
	"net"
	"net/url"
	"time"
)

// ProbeLiveEndpoint reports whether a browser answers at a live endpoint
// (as live_endpoint names it: an http(s) DevTools address, asked for its
// /json/version; a ws(s) browser endpoint; or a DevToolsActivePort file,
// read), and then whether its DevTools port accepts a connection. It
// attaches to nothing: `browsergate doctor` uses it to say that nothing
// answers there before serve's first session finds out.
func ProbeLiveEndpoint(endpoint string, timeout time.Duration) error {
	ws, err := resolveLiveEndpoint(endpoint, timeout)
	if err != nil {
		return err
	}
	u, err := url.Parse(ws)
	if err != nil {
		return fmt.Errorf("%w %q: %v", ErrLiveEndpoint, ws, err)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "wss" {
			port = "443"
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), timeout)
	if err != nil {
		return fmt.Errorf("%w %q: %v", ErrLiveEndpoint, ws, err)
	}
	return conn.Close()
}
