package egress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/browsergate/browsergate/scope/egress"
)

// syncBuffer is a bytes.Buffer safe for the proxy's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDecisionLog checks the canonical line: one record per decision, with
// the same facts OnDecision received.
func TestDecisionLog(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	r := newRig(t, rigOptions{config: func(c *egress.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	}})
	getAllowedThenRefused(t, r)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	ds := r.decisions.all()
	if len(lines) != 2 || len(ds) != 2 {
		t.Fatalf("%d log lines and %d decisions for 2 requests:\n%s", len(lines), len(ds), buf.String())
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		d := ds[i]
		dialed := ""
		if d.Dialed.IsValid() {
			dialed = d.Dialed.String()
		}
		want := map[string]any{
			"msg": "egress decision", "allowed": d.Allowed, "host": d.Host, "rule": d.Rule,
			"dialed": dialed, "resolved": d.Resolved[0].String(), "status": float64(d.Status),
			"target": d.Target, "port": float64(d.Port),
		}
		for k, v := range want {
			if rec[k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, rec[k], v)
			}
		}
	}
	if want := fmt.Sprintf("127.0.0.1:%d", r.backend.port()); ds[0].Dialed.String() != want || !ds[0].Allowed || ds[1].Allowed {
		t.Errorf("decisions %+v", ds)
	}
	if lvl := http.StatusForbidden; ds[1].Status != lvl {
		t.Errorf("denied status %d", ds[1].Status)
	}
}

// getAllowedThenRefused sends the rig's proxy two requests: one to a host
// its policy allows, then one to a host it refuses.
func getAllowedThenRefused(t *testing.T, r *rig) {
	t.Helper()
	client := r.client()
	for _, host := range []string{"app.test", "canary.test"} {
		res, err := client.Get(r.url("http", host, "/"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
}

// TestDecisionLogLevels: a refusal is a warning and an allowed request
// info, unless the proxy is told to log its refusals at another level
// (the launched browser's own traffic, refused as routine).
func TestDecisionLogLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		denied slog.Leveler
		want   []string // levels of the allowed and the refused request
	}{
		{"default", nil, []string{"INFO", "WARN"}},
		{"refusals at info", slog.LevelInfo, []string{"INFO", "INFO"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf syncBuffer
			r := newRig(t, rigOptions{config: func(c *egress.Config) {
				c.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
				c.DeniedLevel = tc.denied
			}})
			getAllowedThenRefused(t, r)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var rec struct{ Level string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				got = append(got, rec.Level)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("levels of the allowed and the refused request: %v, want %v", got, tc.want)
			}
		})
	}
}
