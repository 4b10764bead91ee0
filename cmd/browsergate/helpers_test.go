package main

import (
	"net"
	"net/http"
	"time"

	"github.com/browsergate/browsergate/examples/quickstart"
)

// findRef returns the ref on the first snapshot line containing text.
var findRef = quickstart.FindRef

// resultText is the text of a tool result.
var resultText = quickstart.ResultText

// serveOn serves h on addr and returns its base URL.
func serveOn(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}
