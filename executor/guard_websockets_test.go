package executor

import (
	"slices"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

func mustScope(t *testing.T, cfg scope.Config) *scope.Scope {
	t.Helper()
	sc, err := scope.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// rulesOf renders rules as "pattern offline|allow", in order.
func rulesOf(rules []wsRule) []string {
	var out []string
	for _, r := range rules {
		verdict := "allow"
		if r.Offline {
			verdict = "offline"
		}
		out = append(out, r.URLPattern+" "+verdict)
	}
	return out
}

// TestWebSocketRules: the rules allow exactly what the scope allows where
// a URLPattern can say it, refuse the rest, and end with the catch-alls.
func TestWebSocketRules(t *testing.T) {
	t.Parallel()
	sc := mustScope(t, scope.Config{
		AllowedDomains:    []string{"127.0.0.1", "*.example.com", "admin.*", "app-*.example.org", "10.0.0.7"},
		BlockedDomains:    []string{"bad.example.com"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32 port 8080", "10.0.0.7/32"},
	})
	devtools := func(host string, port uint16) bool {
		return sc.CheckHost(host, port).Allowed && !(host == "10.0.0.7" && port == 9222)
	}
	got := rulesOf(webSocketRules(sc, devtools))
	want := []string{
		"ws://bad.example.com:*/* offline", "wss://bad.example.com:*/* offline",
		"ws://127.0.0.1:8080/* allow", "wss://127.0.0.1:8080/* allow",
		"ws://*.example.com:80/* allow", "wss://*.example.com:80/* allow",
		"ws://*.example.com:443/* allow", "wss://*.example.com:443/* allow",
		"ws://10.0.0.7:9222/* offline", "wss://10.0.0.7:9222/* offline",
		"ws://10.0.0.7:*/* allow", "wss://10.0.0.7:*/* allow",
		"ws://*:*/* offline", "wss://*:*/* offline",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%q\nwant:\n%q", got, want)
	}
	for _, r := range webSocketRules(sc, devtools) {
		if r.Latency != 0 || r.DownloadThroughput != -1 || r.UploadThroughput != -1 {
			t.Errorf("%s throttles: %+v", r.URLPattern, r)
		}
	}
}

// TestWebSocketRulesFailClosed: a block no URLPattern can say withdraws
// every wildcard allowance; allow_external and "*" allow nothing; an
// empty scope leaves only the catch-alls.
func TestWebSocketRulesFailClosed(t *testing.T) {
	t.Parallel()
	sc := mustScope(t, scope.Config{
		AllowedDomains: []string{"*.example.com", "www.example.net", "*"},
		BlockedDomains: []string{"admin.*"},
		AllowExternal:  true,
	})
	got := rulesOf(webSocketRules(sc, func(h string, p uint16) bool { return sc.CheckHost(h, p).Allowed }))
	want := []string{
		"ws://www.example.net:80/* allow", "wss://www.example.net:80/* allow",
		"ws://www.example.net:443/* allow", "wss://www.example.net:443/* allow",
		"ws://*:*/* offline", "wss://*:*/* offline",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%q\nwant:\n%q", got, want)
	}
	empty := rulesOf(webSocketRules(mustScope(t, scope.Config{}), func(string, uint16) bool { return true }))
	if !slices.Equal(empty, []string{"ws://*:*/* offline", "wss://*:*/* offline"}) {
		t.Errorf("an empty scope: %q", empty)
	}
	// A host allowed on too many scattered ports to list gets none.
	scattered := hostRules("h.test", func(p uint16) bool { return p%2 == 0 })
	if len(scattered) != 0 {
		t.Errorf("a host allowed on every even port: %q", rulesOf(scattered))
	}
}
