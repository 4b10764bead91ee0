package executor

import (
	"net"
	"net/http"
	"testing"
)

// serveOn serves h on addr (a loopback address, port 0 for any) for the
// test (or benchmark) and returns its base URL, http://host:port.
func serveOn(tb testing.TB, addr string, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// ServeOn is serveOn for the external test package (executor_test): this
// file is compiled into the package only for its tests.
var ServeOn = serveOn

// serveLoopback serves h on a port of 127.0.0.1 (serveOn).
func serveLoopback(tb testing.TB, h http.HandlerFunc) string {
	return serveOn(tb, "127.0.0.1:0", h)
}
