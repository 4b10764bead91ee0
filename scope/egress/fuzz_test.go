package egress_test

import (
	"bufio"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope/egress"
)

// FuzzServeHTTP feeds arbitrary requests to the proxy. Whatever the request
// line and headers say, the proxy must not panic, must report exactly one
// decision, and may only ever dial the one address the policy allows.
// Dials fail, so nothing leaves the process.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range []string{
		"GET http://app.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n",
		"GET http://app.test:8080/a?b HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"GET http://evil.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n",
		"GET http://127.0.0.1:80/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://[::1]:80/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://user:pw@app.test/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://0x7f.1/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n",
		"CONNECT app.test:443 HTTP/1.1\r\nHost: app.test\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT app.test HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST http://app.test/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
		"GET ws://app.test/ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
	} {
		f.Add(s)
	}
	errDialRefused := errors.New("dial refused by the fuzz test")
	f.Fuzz(func(t *testing.T, raw string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return
		}
		dials := &dialRecorder{fail: errDialRefused}
		recs := &decisions{}
		p, err := egress.New(egress.Config{
			Policy:     newFakePolicy([]string{"app.test"}, "127.0.0.1"),
			Resolver:   newFakeResolver("app.test", "127.0.0.1"),
			Dial:       dials.Dial,
			OnDecision: recs.add,
			Logger:     slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		if n := len(recs.all()); n != 1 {
			t.Errorf("%d decisions for one request %q", n, raw)
		}
		for _, a := range dials.dialed() {
			if !strings.HasPrefix(a, "127.0.0.1:") {
				t.Errorf("request %q dialled %s", raw, a)
			}
		}
		if w.Code >= 200 && w.Code < 300 {
			t.Errorf("request %q got %d with every dial failing", raw, w.Code)
		}
	})
}

// FuzzParseBasic feeds arbitrary Proxy-Authorization values to the
// gateway's credential parser. It must not panic; what it accepts must be
// exactly one spelling of one pair: "Basic", spaces, and the canonical
// base64 of user-id ":" password, with no ':' in the user-id; and what it
// refuses must say why with one of the Auth constants.
func FuzzParseBasic(f *testing.F) {
	for _, s := range []string{
		"Basic dXNlcjpwYXNz",
		"basic   dXNlcjpwYXNz",
		"BASIC dXNlcjpwYXNz ",
		"Basic dXNlcjpwYXN=",
		"Basic dXNlcjpwYXM",
		"Basic dXNlcg==",
		"Basic Og==",
		"Basic",
		"Basic ",
		"Bearer dXNlcjpwYXNz",
		"Basic dXNl\ncjpwYXNz",
		"Basic dXNlcjpw YXNz",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		user, password, why := egress.ParseBasicForTest(v)
		if why != "" {
			if user != "" || password != "" {
				t.Errorf("%q refused (%s) but returned %q, %q", v, why, user, password)
			}
			switch why {
			case egress.AuthScheme, egress.AuthMalformed:
			default:
				t.Errorf("%q refused with %q", v, why)
			}
			return
		}
		if strings.Contains(user, ":") {
			t.Errorf("%q gave a user-id with a colon: %q", v, user)
		}
		scheme, token, _ := strings.Cut(strings.Trim(v, " \t"), " ")
		token = strings.TrimLeft(token, " ")
		if !strings.EqualFold(scheme, "Basic") || token != base64.StdEncoding.EncodeToString([]byte(user+":"+password)) {
			t.Errorf("%q accepted as %q, %q, which is spelled otherwise", v, user, password)
		}
	})
}
