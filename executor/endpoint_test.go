package executor

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolveLiveEndpoint(t *testing.T) {
	t.Parallel()
	version := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/json/version" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"Browser":"Chrome/156","webSocketDebuggerUrl":"ws://127.0.0.1:9222/devtools/browser/abc"}`))
	}))
	t.Cleanup(version.Close)
	noWS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Browser":"Chrome/156"}`))
	}))
	t.Cleanup(noWS.Close)
	dir := t.TempDir()
	good := filepath.Join(dir, "DevToolsActivePort")
	if err := os.WriteFile(good, []byte("9333\n/devtools/browser/f00d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "Bad")
	if err := os.WriteFile(bad, []byte("9333\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, endpoint, want, errPart string
	}{
		{"websocket URL as is", "ws://127.0.0.1:9222/devtools/browser/x", "ws://127.0.0.1:9222/devtools/browser/x", ""},
		{"http endpoint via /json/version", version.URL, "ws://127.0.0.1:9222/devtools/browser/abc", ""},
		{"http endpoint without websocket URL", noWS.URL, "", "no webSocketDebuggerUrl"},
		{"DevToolsActivePort file", good, "ws://127.0.0.1:9333/devtools/browser/f00d", ""},
		{"truncated DevToolsActivePort file", bad, "", "want two lines"},
		{"missing file", filepath.Join(dir, "nope"), "", "neither a ws:// or http:// URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := resolveLiveEndpoint(tc.endpoint, 2*time.Second)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) || !errors.Is(err, ErrLiveEndpoint) {
					t.Fatalf("resolveLiveEndpoint(%q) = %q, %v; want ErrLiveEndpoint containing %q", tc.endpoint, got, err, tc.errPart)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolveLiveEndpoint(%q) = %q, %v; want %q", tc.endpoint, got, err, tc.want)
			}
		})
	}
}

func TestDevtoolsAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ws   string
		want string
		ok   bool
	}{
		{"ws://127.0.0.1:9222/devtools/browser/x", "127.0.0.1:9222", true},
		{"ws://localhost:9333/devtools/browser/x", "127.0.0.1:9333", true},
		{"ws://[::1]:9222/devtools/browser/x", "[::1]:9222", true},
		{"ws://browser.example:9222/devtools/browser/x", "", false},
		{"not a url", "", false},
	} {
		ap, ok := devtoolsAddr(tc.ws)
		if ok != tc.ok || (ok && ap.String() != tc.want) {
			t.Errorf("devtoolsAddr(%q) = %v, %v; want %s, %v", tc.ws, ap, ok, tc.want, tc.ok)
		}
	}
}
