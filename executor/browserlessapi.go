package executor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// browserless 2 (the browserless.io service, @browserless.io/browserless;
// not the browserless engine of engine = "http") launches a Chromium for
// each WebSocket connection to /chromium and proxies the connection to
// its DevTools; the browser closes when the last connection to it
// closes. A second connection reaches the same browser at
// /devtools/browser/{id}, the id its GET /sessions lists under the
// connection's trackingId; GET /kill/{trackingId} closes it whatever is
// connected. Every route asks for the service's token (TOKEN), as
// "Authorization: Bearer" or ?token=: browsergate sends the header, so
// that no URL it logs or reports carries the token (measured on 2.42.0
// with Chromium 156).
//
// A browser browsergate asks for is held by a connection of the daemon's
// own (holder) that sends nothing: the session's connections — the
// probe's, chromedp's and the guard's — come and go through
// /devtools/browser/{id}, and the browser lives while the holder does.

// ErrBrowserless is the error of a browserless that did not give a
// browser.
var ErrBrowserless = errors.New("browserless did not give a browser")

// browserlessClient talks to one browserless. It asks for nothing but
// what its URL names: no proxy of the environment, no redirect followed
// (the address was checked against pool_cidrs, and only it is asked).
type browserlessClient struct {
	api, ws string      // http(s):// and ws(s):// of the service, without a trailing slash
	auth    http.Header // Authorization with the token (nil: none)
	http    *http.Client
}

// newBrowserlessClient is the client of the browserless at raw (ws, wss,
// http or https), with the token of credentialsFile ("": none).
func newBrowserlessClient(raw, credentialsFile string) (*browserlessClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("browserless url %q: %v", raw, err)
	}
	secure := u.Scheme == "wss" || u.Scheme == "https"
	base := strings.TrimRight(u.Host+u.Path, "/")
	c := &browserlessClient{api: "http://" + base, ws: "ws://" + base, http: &http.Client{
		Transport:     &http.Transport{Proxy: nil, ForceAttemptHTTP2: false, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	if secure {
		c.api, c.ws = "https://"+base, "wss://"+base
	}
	if credentialsFile != "" {
		token, err := browserlessToken(credentialsFile)
		if err != nil {
			return nil, err
		}
		c.auth = http.Header{"Authorization": {"Bearer " + token}}
	}
	return c, nil
}

// browserlessToken reads the token from a credentials file (its first
// line). What the file holds never appears in an error.
func browserlessToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read credentials_file: %w", err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("credentials_file %s does not hold browserless's token on its first line", path)
	}
	return line, nil
}

// header is what each connection to the service sends: its token.
func (c *browserlessClient) header() http.Header { return c.auth.Clone() }

// browserlessBrowser is a browser browserless launched for the daemon.
type browserlessBrowser struct {
	tracking string // the trackingId it was asked for under
	id       string // its id: /devtools/browser/{id}
	ws       string // where a connection to it is made

	holder   *websocket.Conn
	mu       sync.Mutex
	released bool
	done     chan struct{} // closed when the holder's connection has ended
}

// launch asks for a browser launched with options (puppeteer's launch
// options, which browserless passes on), waiting up to wait, and holds it.
func (c *browserlessClient) launch(wait time.Duration, options map[string]any) (*browserlessBrowser, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return nil, err
	}
	tracking := "browsergate-" + strings.ToLower(rand.Text()[:20]) // browserless takes up to 32 of [0-9a-zA-Z_-]
	q := url.Values{"trackingId": {tracking}, "launch": {string(opts)}}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	// The handshake is answered once the browser runs. Should the daemon
	// stop waiting first, the connection closes, and browserless closes
	// a browser nothing is connected to.
	d := websocket.Dialer{Proxy: nil, HandshakeTimeout: wait}
	conn, resp, err := d.DialContext(ctx, c.ws+"/chromium?"+q.Encode(), c.header())
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w: %s answered %s", ErrBrowserless, c.ws, browserlessAnswer(resp))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// A browser whose handshake the daemon stopped waiting for
			// may run on: it is killed by its trackingId (one browserless
			// does not know is none).
			_ = c.kill(tracking)
			return nil, fmt.Errorf("%w: %s launched no browser within %s (startup_timeout_seconds)", ErrBrowserless, c.ws, wait)
		}
		return nil, fmt.Errorf("%w: %s did not answer: %v", ErrBrowserless, c.ws, err)
	}
	// Nothing is sent on the holder: a message is read only to be
	// dropped, and none may be large.
	conn.SetReadLimit(1 << 20)
	b := &browserlessBrowser{tracking: tracking, holder: conn, done: make(chan struct{})}
	go b.hold()
	id, err := c.browserID(ctx, tracking)
	if err == nil && !browserIDPattern.MatchString(id) {
		err = fmt.Errorf("%w: %s lists the browser under an id that is not a browser's (%.40q): only letters, digits and dashes are taken", ErrBrowserless, c.api, id)
	}
	if err != nil {
		b.release(c)
		return nil, err
	}
	b.id, b.ws = id, c.ws+"/devtools/browser/"+url.PathEscape(id)
	return b, nil
}

// browserIDPattern is a browser id as Chromium makes them (a GUID): the
// id browserless lists becomes a path of its URL, so nothing else is
// taken (a path or a query would point the daemon's connections at
// another browser than the one probed).
var browserIDPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// hold reads the holder's connection until it ends; nothing is sent on
// it, and a browser answers nothing it was not asked.
func (b *browserlessBrowser) hold() {
	defer close(b.done)
	for {
		if _, _, err := b.holder.ReadMessage(); err != nil {
			return
		}
	}
}

// lost calls gone once should the holder's connection end before the
// browser is released (browserless's TIMEOUT, its restart, a kill); it
// returns what stops watching, which returns once gone is not called any
// more.
func (b *browserlessBrowser) lost(gone func()) (stop func()) {
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-quit:
		case <-b.done:
			b.mu.Lock()
			released := b.released
			b.mu.Unlock()
			if !released {
				gone()
			}
		}
	}()
	return sync.OnceFunc(func() { close(quit); <-exited })
}

// release closes the holder's connection and kills the browser, which
// browserless does whatever else is still connected to it.
func (b *browserlessBrowser) release(c *browserlessClient) error {
	b.mu.Lock()
	b.released = true
	b.mu.Unlock()
	b.holder.Close()
	<-b.done
	return c.kill(b.tracking)
}

// browserID is the id of the browser launched under tracking (GET
// /sessions lists a browser and its pages under it).
func (c *browserlessClient) browserID(ctx context.Context, tracking string) (string, error) {
	var sessions []struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		TrackingID string `json:"trackingId"`
	}
	for {
		err := c.get(ctx, "/sessions?"+url.Values{"trackingId": {tracking}}.Encode(), &sessions)
		if err == nil {
			break
		}
		// browserless answers 500 while another browser is closing (it
		// asks each browser for its pages, and a closing one does not
		// answer: measured on 2.42.0): asked again, it lists them.
		if !errors.Is(err, errBrowserlessFailed) || ctx.Err() != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, s := range sessions {
		if s.Type == "browser" && s.TrackingID == tracking && s.ID != "" {
			return s.ID, nil
		}
	}
	return "", fmt.Errorf("%w: %s lists no browser under the trackingId it was launched with", ErrBrowserless, c.api)
}

// browserlessKillWait bounds GET /kill/{trackingId}.
const browserlessKillWait = 15 * time.Second

// kill is GET /kill/{trackingId}: browserless closes the browser. One it
// no longer knows (404) is gone already.
func (c *browserlessClient) kill(tracking string) error {
	ctx, cancel := context.WithTimeout(context.Background(), browserlessKillWait)
	defer cancel()
	err := c.get(ctx, "/kill/"+url.PathEscape(tracking), nil)
	if errors.Is(err, errNoBrowserlessSession) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kill browser %s: %w", tracking, err)
	}
	return nil
}

// errNoBrowserlessSession is browserless's 404 to a session it does not
// know.
var errNoBrowserlessSession = errors.New("no such session")

// errBrowserlessFailed is browserless's 5xx: an error of its own.
var errBrowserlessFailed = errors.New("its own error")

// get asks the service's API for path and decodes its JSON answer into
// out (nil: ignored).
func (c *browserlessClient) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api+path, nil)
	if err != nil {
		return err
	}
	for k, v := range c.auth {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s did not answer GET %s in time", ErrBrowserless, c.api, strings.SplitN(path, "?", 2)[0])
		}
		return fmt.Errorf("%w: %s did not answer: %v", ErrBrowserless, c.api, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s answered %s: %w", ErrBrowserless, c.api, browserlessAnswer(resp), errNoBrowserlessSession)
	case resp.StatusCode/100 == 5:
		return fmt.Errorf("%w: %s answered %s: %w", ErrBrowserless, c.api, browserlessAnswer(resp), errBrowserlessFailed)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%w: %s answered %s", ErrBrowserless, c.api, browserlessAnswer(resp))
	case out == nil:
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(out); err != nil {
		return fmt.Errorf("%w: %s answered what is not JSON: %v", ErrBrowserless, c.api, err)
	}
	return nil
}

// browserlessAnswer is a refusal's status and the first line of its
// body: browserless's own reason ("Bad or missing authentication.",
// "Too many requests").
func browserlessAnswer(resp *http.Response) string {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	line, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	if line == "" {
		return resp.Status
	}
	return resp.Status + " (" + line + ")"
}
