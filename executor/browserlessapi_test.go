package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeBrowserless answers the routes of browserless 2 the provider uses:
// /chromium launches (a WebSocket held open), /sessions lists the
// launched browser under its trackingId (failing first as often as
// failSessions says), /kill/{trackingId} closes its connection. It notes
// every URL and Authorization it was sent.
type fakeBrowserless struct {
	token        string
	failSessions int
	browserID    string // the id /sessions lists ("": b-1)

	mu       sync.Mutex
	urls     []string
	auth     []string
	tracking string
	launch   string
	holder   *websocket.Conn
	killed   []string
}

func (f *fakeBrowserless) serve(t *testing.T) *httptest.Server {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.urls = append(f.urls, r.URL.String())
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			http.Error(w, "Bad or missing authentication.", http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/chromium":
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			f.mu.Lock()
			f.tracking, f.launch, f.holder = r.URL.Query().Get("trackingId"), r.URL.Query().Get("launch"), c
			f.mu.Unlock()
		case r.URL.Path == "/sessions":
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.failSessions > 0 {
				f.failSessions--
				http.Error(w, "fetch failed", http.StatusInternalServerError)
				return
			}
			id := f.browserID
			if id == "" {
				id = "b-1"
			}
			fmt.Fprintf(w, `[{"id":%q,"type":"browser","trackingId":%q},{"id":"P1","type":"page","trackingId":%q}]`, id, f.tracking, f.tracking)
		case strings.HasPrefix(r.URL.Path, "/kill/"):
			f.mu.Lock()
			defer f.mu.Unlock()
			id := strings.TrimPrefix(r.URL.Path, "/kill/")
			if id != f.tracking || f.holder == nil {
				http.Error(w, "Couldn't locate session", http.StatusNotFound)
				return
			}
			f.killed = append(f.killed, id)
			f.holder.Close()
			f.holder = nil
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// browserlessTokenFile writes token into a credentials file of mode 600.
func browserlessTokenFile(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBrowserlessClient: a browser is launched under a trackingId of the
// daemon's with the launch options asked for, found through /sessions
// (asked again while browserless answers 500), driven at
// /devtools/browser/{id}, and killed when released; the token goes only
// in the Authorization header, never in a URL; a wrong token is refused
// with browserless's reason and no token in it; a holding connection
// browserless ends is reported, and one the daemon releases is not.
func TestBrowserlessClient(t *testing.T) {
	t.Parallel()
	t.Run("launch, find, release", func(t *testing.T) {
		t.Parallel()
		f := &fakeBrowserless{token: "tok-123", failSessions: 2}
		srv := f.serve(t)
		c, err := newBrowserlessClient("ws://"+strings.TrimPrefix(srv.URL, "http://"), browserlessTokenFile(t, f.token))
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.launch(5*time.Second, browserlessLaunch("10.0.5.1"))
		if err != nil {
			t.Fatal(err)
		}
		if want := c.ws + "/devtools/browser/b-1"; b.ws != want {
			t.Errorf("ws = %q, want %q", b.ws, want)
		}
		var opts struct {
			Args              []string
			IgnoreDefaultArgs []string
		}
		if err := json.Unmarshal([]byte(f.launch), &opts); err != nil || !strings.Contains(strings.Join(opts.Args, " "), "EXCLUDE 10.0.5.1") ||
			len(opts.IgnoreDefaultArgs) != 1 || opts.IgnoreDefaultArgs[0] != "--disable-popup-blocking" {
			t.Errorf("launch options %s (%v): want the own browser's flags and popups blocked", f.launch, err)
		}
		reported := false
		stop := b.lost(func() { reported = true })
		if err := b.release(c); err != nil {
			t.Fatal(err)
		}
		stop()
		if reported {
			t.Error("a released browser was reported lost")
		}
		if len(f.killed) != 1 || f.killed[0] != b.tracking || !strings.HasPrefix(b.tracking, "browsergate-") || len(b.tracking) > 32 {
			t.Errorf("killed %v, want the trackingId %q (browsergate-…, at most 32 characters)", f.killed, b.tracking)
		}
		for i, u := range f.urls {
			if strings.Contains(u, f.token) || f.auth[i] != "Bearer "+f.token {
				t.Errorf("request %s sent Authorization %q: the token belongs in the header only", u, f.auth[i])
			}
		}
	})
	t.Run("an id that is no browser's is refused", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"../../chromium?launch={}", "b-1/../x", "b 1", strings.Repeat("a", 65)} {
			f := &fakeBrowserless{token: "tok-123", browserID: id}
			srv := f.serve(t)
			c, err := newBrowserlessClient(srv.URL, browserlessTokenFile(t, f.token))
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.launch(5*time.Second, nil)
			if err == nil || !strings.Contains(err.Error(), "not a browser's") {
				t.Errorf("browser id %q: %v, %+v; want the launch refused", id, err, b)
			}
			f.mu.Lock()
			if len(f.killed) != 1 {
				t.Errorf("browser id %q: killed %v, want the launched browser killed", id, f.killed)
			}
			f.mu.Unlock()
		}
	})
	t.Run("a holding connection browserless ends is reported", func(t *testing.T) {
		t.Parallel()
		f := &fakeBrowserless{token: "tok-123"}
		srv := f.serve(t)
		c, err := newBrowserlessClient(srv.URL, browserlessTokenFile(t, f.token))
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.launch(5*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		reported := make(chan struct{})
		stop := b.lost(func() { close(reported) })
		defer stop()
		f.mu.Lock()
		f.holder.Close() // as browserless's TIMEOUT does
		f.mu.Unlock()
		select {
		case <-reported:
		case <-time.After(5 * time.Second):
			t.Fatal("the end of the holding connection was not reported")
		}
	})
	t.Run("a wrong token is refused with the reason", func(t *testing.T) {
		t.Parallel()
		f := &fakeBrowserless{token: "tok-123"}
		srv := f.serve(t)
		c, err := newBrowserlessClient(srv.URL, browserlessTokenFile(t, "not-the-token"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.launch(5*time.Second, nil)
		if !errors.Is(err, ErrBrowserless) || !strings.Contains(err.Error(), "answered 401 Unauthorized (Bad or missing authentication.)") ||
			strings.Contains(err.Error(), "not-the-token") {
			t.Errorf("err = %v, want browserless's 401 and its reason, without the token", err)
		}
	})
	t.Run("an empty credentials file says so without its contents", func(t *testing.T) {
		t.Parallel()
		_, err := newBrowserlessClient("ws://10.0.5.2:3000", browserlessTokenFile(t, "   "))
		if err == nil || !strings.Contains(err.Error(), "does not hold browserless's token") {
			t.Errorf("err = %v, want the file named as holding no token", err)
		}
	})
}
