package executor

import (
	"net"
	"net/http"
	"testing"
)

// serveLoopback serves h on a loopback port for the test (or benchmark)
// and returns its base URL, http://127.0.0.1:port.
func serveLoopback(tb testing.TB, h http.HandlerFunc) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
