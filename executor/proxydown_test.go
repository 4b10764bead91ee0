package executor

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"

	"github.com/browsergate/browsergate/toolclad"
)

// With its egress proxy down, a session's browser context has nowhere to
// send anything: Chromium does not fall back to a direct connection.
func TestProxyDownMeansNothingGoesOut(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	site := serveLoopback(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("<title>up</title>"))
	}) + "/"

	m := testkit.Manifest(t, "[tool]\nname = \"down\"\n[browser]\nstartup_timeout_seconds = 30\n[browser.scope]\nallowed_domains = [\"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]\n[browser.commands.navigate]\n")
	engine, store := testkit.Policies(t), testkit.Store(t)
	e, err := New(Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	cmd := m.Command("navigate")
	navigate := func() *toolclad.Reply {
		args, err := cmd.Validate(map[string]any{"url": site})
		if err != nil {
			t.Fatal(err)
		}
		return e.Run(context.Background(), &toolclad.Call{Manifest: m, Command: cmd, SessionID: "s", Args: args, Progress: func(string) {}})
	}
	if r := navigate(); r.IsError || !strings.Contains(r.Text, `title="up"`) {
		t.Fatalf("navigate with the proxy up: %+v", r)
	}
	before := hits.Load()
	s, _ := e.session(&toolclad.Call{SessionID: "s", Manifest: m})
	s.egress.proxy.Close()
	r := navigate()
	if !r.IsError {
		t.Fatalf("navigate with the proxy down succeeded: %s", r.Text)
	}
	if n := hits.Load() - before; n != 0 {
		t.Fatalf("with the proxy down the site still got %d request(s)", n)
	}
}
