package executor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// A Selenium Grid 4 hands out browsers through the W3C WebDriver API: a
// session is made with POST {grid}/session and deleted with DELETE
// {grid}/session/{id}. For a Chromium the Grid also answers with se:cdp,
// a WebSocket URL of its own through which the browser's DevTools are
// reached (the Grid proxies it to the node, and the node to the browser's
// DevTools port, which stays on the node's loopback). browsergate drives
// the browser over se:cdp only; the WebDriver session is what keeps the
// browser and what ends it.

// ErrGrid is the error of a Grid that did not hand out a browser.
var ErrGrid = errors.New("the Selenium Grid did not give a browser")

// gridClient talks to one Grid. It asks for nothing but what its URL
// names: no proxy of the environment, no redirect followed (the Grid's
// address was checked against pool_cidrs, and only it is asked).
type gridClient struct {
	base string      // the Grid's URL, without a trailing slash
	auth http.Header // Authorization for the Grid's basic authentication (nil: none)
	http *http.Client
}

// gridSession is a WebDriver session the Grid made.
type gridSession struct {
	id  string // the WebDriver session id
	cdp string // se:cdp: the browser's DevTools, through the Grid
}

// newGridClient is the client of the Grid at url, with the credentials
// of credentialsFile ("": none).
func newGridClient(url, credentialsFile string) (*gridClient, error) {
	g := &gridClient{base: strings.TrimRight(url, "/"), http: &http.Client{
		Transport:     &http.Transport{Proxy: nil, ForceAttemptHTTP2: false, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	if credentialsFile != "" {
		h, err := gridAuth(credentialsFile)
		if err != nil {
			return nil, err
		}
		g.auth = h
	}
	return g, nil
}

// gridAuth reads user:password from a credentials file (one line) into
// the Authorization header of basic authentication (RFC 7617). What the
// file holds never appears in an error.
func gridAuth(path string) (http.Header, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read credentials_file: %w", err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	line = strings.TrimSpace(line)
	user, pass, ok := strings.Cut(line, ":")
	if !ok || user == "" {
		return nil, fmt.Errorf("credentials_file %s does not hold user:password on its first line", path)
	}
	return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}}, nil
}

// header is what each DevTools connection through the Grid sends: its
// basic authentication, which the Grid may ask of WebSockets too.
func (g *gridClient) header() http.Header { return g.auth.Clone() }

// gridLateWait bounds how long a session request the daemon stopped
// waiting for (startup_timeout_seconds passed) is still read to its end,
// so that a browser the Grid made after all is deleted at once instead
// of waiting for the Grid's own session timeout. The Grid's new-session
// queue gives up after 300 s by default (--session-request-timeout).
const gridLateWait = 5 * time.Minute

// create asks the Grid for a session with caps, waiting up to wait. A
// request that outlives wait goes on in the background, and a session
// made then is deleted.
func (g *gridClient) create(wait time.Duration, caps map[string]any, late func(id string, err error)) (gridSession, error) {
	body, err := json.Marshal(map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}})
	if err != nil {
		return gridSession{}, err
	}
	type answer struct {
		s   gridSession
		err error
	}
	// Unbuffered: an answer is handed over only to a caller still
	// waiting for it; else the request's goroutine owns the session.
	done := make(chan answer)
	gaveUp := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), max(wait, gridLateWait))
		defer cancel()
		s, err := g.newSession(ctx, body)
		select {
		case done <- answer{s, err}:
		case <-gaveUp:
			if err == nil {
				err = g.delete(s.id)
			}
			if late != nil {
				late(s.id, err)
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-done:
		return a.s, a.err
	case <-timer.C:
		close(gaveUp)
		// The answer may have come as the timer fired.
		select {
		case a := <-done:
			return a.s, a.err
		default:
		}
		return gridSession{}, fmt.Errorf("%w: %s made no session within %s (startup_timeout_seconds); should it make one later, it is deleted", ErrGrid, g.base, wait)
	}
}

// newSession is POST /session.
func (g *gridClient) newSession(ctx context.Context, body []byte) (gridSession, error) {
	var v struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			CDP string `json:"se:cdp"`
		} `json:"capabilities"`
	}
	if err := g.do(ctx, http.MethodPost, "/session", body, &v); err != nil {
		return gridSession{}, err
	}
	if v.SessionID == "" {
		return gridSession{}, fmt.Errorf("%w: %s answered a new session without its id", ErrGrid, g.base)
	}
	s := gridSession{id: v.SessionID, cdp: v.Capabilities.CDP}
	if s.cdp == "" {
		// A browser the daemon cannot drive: let it go at once.
		derr := g.delete(s.id)
		return gridSession{}, errors.Join(fmt.Errorf("%w: %s answered session %s without se:cdp (a Chromium node of Selenium Grid 4 answers with it)", ErrGrid, g.base, s.id), derr)
	}
	return s, nil
}

// gridDeleteWait bounds DELETE /session/{id}: the node quits the browser
// (chromedriver), which takes well under a second.
const gridDeleteWait = 15 * time.Second

// delete is DELETE /session/{id}: the Grid quits the browser. A session
// the Grid no longer knows (it timed out, its node went) is gone already.
func (g *gridClient) delete(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), gridDeleteWait)
	defer cancel()
	if err := g.do(ctx, http.MethodDelete, "/session/"+id, nil, nil); err != nil && !errors.Is(err, errNoSession) {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// errNoSession is the WebDriver error of a session the Grid does not
// know (404, "invalid session id").
var errNoSession = errors.New("invalid session id")

// A Grid's node ends a session nothing used for its session timeout
// (--session-timeout, 300 s by default): a WebDriver command is a use,
// and so is a message on se:cdp, but a DevTools connection open and
// silent is not (measured on Grid 4.48.0: a session whose se:cdp had a
// connection open and no message for 45 s was stopped by a 15 s
// timeout; one with a message every 3 s, or GET /timeouts every 5 s,
// lived on). A browsergate session whose agent thinks for longer than
// that would lose its browser, so while a session's browser is the
// daemon's to keep, it asks the Grid for the session's timeouts, a
// command that touches no page, at a third of the shortest session
// timeout the Grid's nodes report.

// keepAliveEvery is how often a session is kept alive: a third of the
// shortest session timeout of the Grid's nodes (GET /status), between
// 1 s and 60 s; 60 s when the Grid does not say.
func (g *gridClient) keepAliveEvery() time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var st struct {
		Nodes []struct {
			SessionTimeout int64 `json:"sessionTimeout"` // ms
		} `json:"nodes"`
	}
	every := time.Minute
	if g.do(ctx, http.MethodGet, "/status", nil, &st) != nil {
		return every
	}
	for _, n := range st.Nodes {
		if d := time.Duration(n.SessionTimeout) * time.Millisecond / 3; n.SessionTimeout > 0 && d < every {
			every = max(d, time.Second)
		}
	}
	return every
}

// keepAlive asks for session id's timeouts every interval until stop is
// called; gone is called once should the Grid no longer know the session.
func (g *gridClient) keepAlive(id string, every time.Duration, gone func(error)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := g.do(ctx, http.MethodGet, "/session/"+id+"/timeouts", nil, nil)
			cancel()
			if errors.Is(err, errNoSession) {
				gone(err)
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// do sends one WebDriver command and decodes its value into out (nil:
// ignored). A WebDriver error is returned with its code and message.
func (g *gridClient) do(ctx context.Context, method, path string, body []byte, out any) error {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, r)
	if err != nil {
		return err
	}
	for k, v := range g.auth {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := g.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s did not answer %s %s in time", ErrGrid, g.base, method, path)
		}
		return fmt.Errorf("%w: %s did not answer: %v", ErrGrid, g.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: read %s's answer: %v", ErrGrid, g.base, err)
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	_ = json.Unmarshal(data, &v)
	if resp.StatusCode == http.StatusNotFound && strings.HasPrefix(gridReason(v.Value, data), "invalid session id") {
		return fmt.Errorf("%w: %s answered %s: %w", ErrGrid, g.base, resp.Status, errNoSession)
	}
	if resp.StatusCode != http.StatusOK {
		if why := gridReason(v.Value, data); why != "" {
			return fmt.Errorf("%w: %s answered %s: %s", ErrGrid, g.base, resp.Status, why)
		}
		return fmt.Errorf("%w: %s answered %s", ErrGrid, g.base, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(v.Value, out); err != nil {
		return fmt.Errorf("%w: %s answered what is not a WebDriver value: %v", ErrGrid, g.base, err)
	}
	return nil
}

// gridReason is the Grid's own word on a failed command: the WebDriver
// error and the first lines of its message (a Grid's messages carry the
// node's build and host details after them), or the start of the body.
func gridReason(value json.RawMessage, body []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(value, &e) == nil && (e.Error != "" || e.Message != "") {
		msg := firstLines(e.Message, 3, 600)
		if e.Error == "" {
			return msg
		}
		if msg == "" {
			return e.Error
		}
		return e.Error + ": " + msg
	}
	return firstLines(string(body), 1, 300)
}

// firstLines is the first n non-empty lines of s joined by "; ", cut at
// limit bytes, leaving out the lines a Grid adds about itself (its host,
// build, system and driver).
func firstLines(s string, n, limit int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		about := strings.HasPrefix(l, "Host info:") || strings.HasPrefix(l, "Build info:") || strings.HasPrefix(l, "System info:") || strings.HasPrefix(l, "Driver info:")
		if l != "" && !about && len(out) < n {
			out = append(out, l)
		}
	}
	r := strings.Join(out, "; ")
	if len(r) > limit {
		r = r[:limit] + "…"
	}
	return r
}
