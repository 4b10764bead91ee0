package egress_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
)

// A proxy in front of a browser refuses what the scope refuses, and says
// which rule did it in response headers.
func ExampleProxy() {
	s, err := scope.New(scope.Config{AllowedDomains: []string{"*.example.com"}})
	if err != nil {
		panic(err)
	}
	p, err := egress.New(egress.Config{Policy: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	addr, err := p.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	// Chromium would be started with --proxy-server=http://<addr>
	// --proxy-bypass-list=<-loopback>; here a Go client stands in for it.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}}
	res, err := client.Get("http://169.254.169.254/latest/meta-data/")
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
	// Output:
	// 403 address class metadata
}

// One gateway serves every session's proxy; a request is served only with
// the credentials of one of them, which the daemon gives the browser in
// answer to the gateway's 407 (Fetch.authRequired).
func ExampleGateway() {
	gw, err := egress.NewGateway(egress.GatewayConfig{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	addr, err := gw.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s, err := scope.New(scope.Config{AllowedDomains: []string{"*.example.com"}})
	if err != nil {
		panic(err)
	}
	p, err := egress.New(egress.Config{Policy: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	creds, remove := gw.Add(p)
	defer remove()

	get := func(user *url.Userinfo) {
		proxy := &url.URL{Scheme: "http", Host: addr, User: user}
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
		res, err := client.Get("http://169.254.169.254/latest/meta-data/")
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusProxyAuthRequired {
			fmt.Println(res.StatusCode, res.Header.Get("Proxy-Authenticate"))
			return
		}
		fmt.Println(res.StatusCode, res.Header.Get("X-Browsergate-Denied"))
	}
	get(nil)
	get(url.UserPassword(creds.Username, "guess"))
	get(url.UserPassword(creds.Username, creds.Password))
	// Output:
	// 407 Basic realm="browsergate"
	// 407 Basic realm="browsergate"
	// 403 address class metadata
}
