package executor

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGrid answers the WebDriver commands of a Selenium Grid: new
// sessions as answer says, and it notes what it was asked.
type fakeGrid struct {
	answer func(n int) (status int, body string, delay time.Duration)

	mu      sync.Mutex
	created int
	auth    []string
	caps    []map[string]any
	deleted []string
	kept    int // GET /session/{id}/timeouts: the third and later answer that the session is gone
}

func (g *fakeGrid) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auth = append(g.auth, r.Header.Get("Authorization"))
		g.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/session":
			var req struct {
				Capabilities struct {
					AlwaysMatch map[string]any `json:"alwaysMatch"`
				} `json:"capabilities"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			g.mu.Lock()
			g.created++
			n := g.created
			g.caps = append(g.caps, req.Capabilities.AlwaysMatch)
			g.mu.Unlock()
			status, body, delay := g.answer(n)
			time.Sleep(delay)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		case r.Method == http.MethodGet && r.URL.Path == "/status":
			fmt.Fprint(w, `{"value":{"ready":true,"nodes":[{"sessionTimeout":300000},{"sessionTimeout":1500}]}}`)
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/timeouts"):
			g.mu.Lock()
			g.kept++
			gone := g.kept > 2
			g.mu.Unlock()
			if gone {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"value":{"error":"invalid session id","message":"Unable to find session with ID: k"}}`)
				return
			}
			fmt.Fprint(w, `{"value":{"implicit":0}}`)
		case r.Method == http.MethodDelete && r.URL.Path == "/session/gone":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"value":{"error":"invalid session id","message":"Unable to find session with ID: gone"}}`)
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/session/"):
			g.mu.Lock()
			g.deleted = append(g.deleted, strings.TrimPrefix(r.URL.Path, "/session/"))
			g.mu.Unlock()
			fmt.Fprint(w, `{"value":null}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (g *fakeGrid) deletedIDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.deleted)
}

func made(id string) string {
	return fmt.Sprintf(`{"value":{"sessionId":%q,"capabilities":{"browserName":"chrome","se:cdp":"ws://10.0.5.2:4444/session/%s/se/cdp"}}}`, id, id)
}

// TestGridSessions: a session the Grid makes is asked for a headless,
// quiet Chromium with popups blocked and is deleted by its id; a Grid's
// refusal is reported with its own reason (its first lines); a session
// without se:cdp is refused and deleted; a session made after the daemon
// stopped waiting is deleted as soon as it is answered; a Grid where
// nothing answers is said to be so.
func TestGridSessions(t *testing.T) {
	t.Parallel()
	t.Run("made, asked well, deleted", func(t *testing.T) {
		t.Parallel()
		g := &fakeGrid{answer: func(int) (int, string, time.Duration) { return 200, made("s1"), 0 }}
		srv := g.serve(t)
		c, err := newGridClient(srv.URL+"/", "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.create(5*time.Second, gridCapabilities("10.0.5.1"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.id != "s1" || s.cdp != "ws://10.0.5.2:4444/session/s1/se/cdp" {
			t.Errorf("session %+v", s)
		}
		caps, _ := json.Marshal(g.caps[0])
		for _, want := range []string{`"browserName":"chrome"`, `"--headless"`, `"--disable-background-networking"`, `"excludeSwitches":["disable-popup-blocking"]`, `MAP * ~NOTFOUND , EXCLUDE 10.0.5.1`} {
			if !strings.Contains(string(caps), want) {
				t.Errorf("the capabilities asked for lack %s: %s", want, caps)
			}
		}
		if err := c.delete(s.id); err != nil {
			t.Fatal(err)
		}
		if got := g.deletedIDs(); !slices.Equal(got, []string{"s1"}) {
			t.Errorf("deleted %v", got)
		}
		if g.auth[0] != "" {
			t.Errorf("a Grid without credentials_file was sent Authorization %q", g.auth[0])
		}
	})
	t.Run("the Grid's reason", func(t *testing.T) {
		t.Parallel()
		g := &fakeGrid{answer: func(int) (int, string, time.Duration) {
			return 500, `{"value":{"error":"session not created","message":"Could not start a new session. No nodes support the capabilities in the request\nBuild info: version: '4.48.0'\nSystem info: os.name: 'Linux'\nDriver info: driver.version: unknown","stacktrace":"org.openqa..."}}`, 0
		}}
		srv := g.serve(t)
		c, _ := newGridClient(srv.URL, "")
		_, err := c.create(5*time.Second, gridCapabilities("10.0.5.1"), nil)
		if !errors.Is(err, ErrGrid) || !strings.Contains(err.Error(), "session not created: Could not start a new session. No nodes support the capabilities in the request") {
			t.Errorf("err = %v", err)
		}
		if strings.Contains(fmt.Sprint(err), "Driver info") || strings.Contains(fmt.Sprint(err), "stacktrace") {
			t.Errorf("the reason carries the Grid's details past its first lines: %v", err)
		}
	})
	t.Run("no se:cdp", func(t *testing.T) {
		t.Parallel()
		g := &fakeGrid{answer: func(int) (int, string, time.Duration) {
			return 200, `{"value":{"sessionId":"ff","capabilities":{"browserName":"firefox"}}}`, 0
		}}
		srv := g.serve(t)
		c, _ := newGridClient(srv.URL, "")
		if _, err := c.create(5*time.Second, gridCapabilities("10.0.5.1"), nil); err == nil || !strings.Contains(err.Error(), "without se:cdp") {
			t.Errorf("err = %v", err)
		}
		if got := g.deletedIDs(); !slices.Equal(got, []string{"ff"}) {
			t.Errorf("deleted %v, want the session without se:cdp", got)
		}
	})
	t.Run("made too late", func(t *testing.T) {
		t.Parallel()
		g := &fakeGrid{answer: func(int) (int, string, time.Duration) { return 200, made("late"), 600 * time.Millisecond }}
		srv := g.serve(t)
		c, _ := newGridClient(srv.URL, "")
		lateDone := make(chan string, 1)
		_, err := c.create(100*time.Millisecond, gridCapabilities("10.0.5.1"), func(id string, err error) {
			if err != nil {
				t.Errorf("late delete: %v", err)
			}
			lateDone <- id
		})
		if !errors.Is(err, ErrGrid) || !strings.Contains(err.Error(), "made no session within 100ms") {
			t.Errorf("err = %v", err)
		}
		select {
		case id := <-lateDone:
			if id != "late" || !slices.Equal(g.deletedIDs(), []string{"late"}) {
				t.Errorf("late session %q, deleted %v", id, g.deletedIDs())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the session made after the daemon stopped waiting was not deleted")
		}
	})
	t.Run("nothing answers", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, _ := newGridClient("http://"+addr, "")
		if _, err := c.create(5*time.Second, gridCapabilities("10.0.5.1"), nil); !errors.Is(err, ErrGrid) || !strings.Contains(err.Error(), "did not answer") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestGridCredentials: the credentials file's user:password is sent as
// basic authentication to the Grid and on each DevTools connection
// (header), and a file without it is refused without showing what it
// holds.
func TestGridCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "grid")
	os.WriteFile(good, []byte("gate:s3cr3t-pw\n"), 0o600)
	g := &fakeGrid{answer: func(int) (int, string, time.Duration) { return 200, made("a"), 0 }}
	srv := g.serve(t)
	c, err := newGridClient(srv.URL, good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.create(5*time.Second, gridCapabilities("10.0.5.1"), nil); err != nil {
		t.Fatal(err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("gate:s3cr3t-pw"))
	if g.auth[0] != want || c.header().Get("Authorization") != want {
		t.Errorf("sent %q, DevTools header %q, want %q", g.auth[0], c.header().Get("Authorization"), want)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("just-a-token\n"), 0o600)
	if _, err := newGridClient(srv.URL, bad); err == nil || strings.Contains(err.Error(), "just-a-token") {
		t.Errorf("err = %v, want a refusal that does not show the file", err)
	}
}

// TestGridKeepAlive: a session is kept alive at a third of the shortest
// session timeout the Grid's nodes report (at least 1 s) until the Grid
// says it no longer knows the session; deleting a session the Grid no
// longer knows is no error.
func TestGridKeepAlive(t *testing.T) {
	t.Parallel()
	g := &fakeGrid{answer: func(int) (int, string, time.Duration) { return 200, made("k"), 0 }}
	srv := g.serve(t)
	c, _ := newGridClient(srv.URL, "")
	if every := c.keepAliveEvery(); every != time.Second {
		t.Errorf("kept alive every %v, want 1s (a third of 1.5 s, at least 1 s)", every)
	}
	gone := make(chan error, 1)
	stop := c.keepAlive("k", 20*time.Millisecond, func(err error) { gone <- err })
	defer stop()
	select {
	case err := <-gone:
		g.mu.Lock()
		kept := g.kept
		g.mu.Unlock()
		if !errors.Is(err, errNoSession) || kept != 3 {
			t.Errorf("gone with %v after %d keep-alives", err, kept)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the keep-alive did not notice the session was gone")
	}
	if err := c.delete("gone"); err != nil {
		t.Errorf("delete a session the Grid no longer knows: %v", err)
	}
}

// TestLoggedSessionShowsOnlyThePrefix: above debug, the daemon's log shows
// a WebDriver session id by its first 8 characters, never whole (the id
// drives the browser through the Grid).
func TestLoggedSessionShowsOnlyThePrefix(t *testing.T) {
	const id = "3f2a9c1e5b7d4e8f9a0b1c2d3e4f5a6b"
	if got := loggedSession(id).Value.String(); got != "3f2a9c1e…" || strings.Contains(got, id) {
		t.Errorf("loggedSession(%q) = %q, want its first 8 characters", id, got)
	}
	if got := loggedSession("short").Value.String(); got != "short" {
		t.Errorf("loggedSession(%q) = %q", "short", got)
	}
}

// TestGridCDPMustBeTheGridsOwnAddress: a session's se:cdp is used only at
// the Grid's own address (its port defaulted by the scheme); a node's
// host with the hub's port (a hub whose nodes lack grid-url), another
// port, an address outside the pool, or another scheme than the Grid's
// (its credentials in clear to a Grid reached over TLS) is refused,
// saying why.
func TestGridCDPMustBeTheGridsOwnAddress(t *testing.T) {
	pools := []netip.Prefix{netip.MustParsePrefix("10.0.5.0/24"), netip.MustParsePrefix("10.0.6.0/24")}
	for _, tc := range []struct{ grid, cdp, want string }{
		{"http://10.0.5.2:4444", "ws://10.0.5.2:4444/session/abc/se/cdp", ""},
		{"http://10.0.5.2", "ws://10.0.5.2:80/session/abc/se/cdp", ""},
		{"https://10.0.5.2", "wss://10.0.5.2/session/abc/se/cdp", ""},
		{"http://10.0.5.2:4444", "ws://10.0.6.7:4444/session/abc/se/cdp", "give each node the Grid's URL as its grid-url"},
		{"http://10.0.5.2:4444", "ws://10.0.5.2:5555/session/abc/se/cdp", "not at its own address 10.0.5.2:4444"},
		{"http://10.0.5.2:4444", "ws://192.168.1.1:4444/session/abc/se/cdp", "outside pool_cidrs"},
		{"https://10.0.5.2:4444", "ws://10.0.5.2:4444/session/abc/se/cdp", "over ws, not wss"},
		{"http://10.0.5.2:4444", "wss://10.0.5.2:4444/session/abc/se/cdp", "over wss, not ws"},
	} {
		err := checkGridCDP(tc.grid, gridSession{id: "abc", cdp: tc.cdp}, pools)
		if tc.want == "" && err != nil {
			t.Errorf("%s for Grid %s refused: %v", tc.cdp, tc.grid, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s for Grid %s: %v, want an error saying %q", tc.cdp, tc.grid, err, tc.want)
		}
	}
}
