package executor

import (
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope"
)

// TestRequestPacingRefusesALateTurn: with one request per 1000 s and a
// minute to wait, the first request to a host goes, and the next to the
// same host (another port, another spelling of its address) is refused by
// rule requests_per_second_per_host at once, saying why; another host has
// its own turn; a request the scope refused, and a URL with no host,
// are left as they are and take no turn.
func TestRequestPacingRefusesALateTurn(t *testing.T) {
	t.Parallel()
	p := requestPacing{limiter: web.NewHostLimiter(0.001), within: time.Minute}
	allow := func(url string) scope.Verdict { return scope.Verdict{Allowed: true, URL: url} }

	if v := p.paced(allow("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/"); !v.Allowed {
		t.Fatalf("the first request to 127.0.0.1 was refused: %+v", v)
	}
	for _, url := range []string{"http://127.0.0.1:9090/other-port", "http://[::ffff:127.0.0.1]:8080/mapped"} {
		v := p.paced(allow(url), url)
		if v.Allowed {
			t.Errorf("%s went at once, though 127.0.0.1 had had its turn", url)
			continue
		}
		if v.Rule != rulePaced || v.URL != url {
			t.Errorf("%s: refused by %q for %q, want rule %q for the URL", url, v.Rule, v.URL, rulePaced)
		}
		for _, want := range []string{"no turn at host", "requests_per_second_per_host", "timeout_seconds (1m0s)"} {
			if !strings.Contains(v.Reason, want) {
				t.Errorf("%s: reason %q does not say %q", url, v.Reason, want)
			}
		}
	}
	if v := p.paced(allow("http://127.0.0.3/"), "http://127.0.0.3/"); !v.Allowed {
		t.Errorf("another host waited on 127.0.0.1's turn: %+v", v)
	}
	refused := scope.Verdict{URL: "http://127.0.0.4/", Rule: "blocked domain", Reason: "out of scope"}
	if v := p.paced(refused, refused.URL); v != refused {
		t.Errorf("a refusal became %+v", v)
	}
	if v := p.paced(allow("http://127.0.0.4/"), "http://127.0.0.4/"); !v.Allowed {
		t.Errorf("the refused request to 127.0.0.4 took its turn: the next was refused: %+v", v)
	}
	for _, url := range []string{"data:text/plain,x", "blob:http://127.0.0.1/uuid", "about:blank"} {
		for range 2 {
			if v := p.paced(allow(url), url); !v.Allowed {
				t.Errorf("%s, with no host, was paced: %+v", url, v)
			}
		}
	}
}

// TestRequestPacingOffByDefault: a manifest that sets no rate (a limiter
// of rate 0) and no limiter at all pace nothing.
func TestRequestPacingOffByDefault(t *testing.T) {
	t.Parallel()
	for _, p := range []requestPacing{{}, {limiter: web.NewHostLimiter(0), within: time.Minute}} {
		for range 5 {
			if v := p.paced(scope.Verdict{Allowed: true}, "http://127.0.0.1/"); !v.Allowed {
				t.Fatalf("pacing off refused a request: %+v", v)
			}
		}
	}
}
