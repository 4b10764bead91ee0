package daemon

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/evidence"
)

// The operator console: /console/ is a small web application the daemon
// serves for its operators. It shows the live sessions and their last
// calls, the calls held for a human with their question and Approve and
// Deny buttons, and the evidence timeline of a session with its
// verification. Operators sign in with their operator token; the console
// then knows them by two things together: an HttpOnly, SameSite=Strict
// cookie, and a secret in the path of every console URL (/console/s/KEY/).
// A cookie alone is not enough because browsers send a host's cookies to
// all of its ports: a web app the agent runs on another port of the same
// host would receive it. The path is not sent anywhere but to the console
// (Referrer-Policy: same-origin). Every change is a POST that must come
// from the console's own origin (net/http's CrossOriginProtection, on the
// browser's Sec-Fetch-Site and Origin) and carry the sign-in's CSRF token.
// A sign-in ends after 12 hours, after an hour unused, and as soon as its
// operator's token leaves the operator file. The pages load nothing from
// elsewhere and say so in a strict Content-Security-Policy.

//go:embed console
var consoleFiles embed.FS

var consolePages = template.Must(template.New("").Funcs(template.FuncMap{
	// json writes arguments as the agent wrote them: <PORTAL_PW>, not
	// JSON's HTML-safe \u003cPORTAL_PW\u003e. The template escapes the
	// text for HTML where it lands.
	"json": func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return "?"
		}
		return strings.TrimSuffix(b.String(), "\n")
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"clip": func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never inside a character
		}
		return s[:cut] + "…"
	},
	"allowed": func(b *bool) string {
		switch {
		case b == nil:
			return ""
		case *b:
			return "allowed"
		}
		return "refused"
	},
}).ParseFS(consoleFiles, "console/*.html"))

// consoleCookie is the console sign-in's cookie.
const consoleCookie = "browsergate_console"

// signInFor is how long a console sign-in lasts; signInIdle ends one
// unused that long.
const (
	signInFor  = 12 * time.Hour
	signInIdle = time.Hour
)

// consoleCSP is the console's Content-Security-Policy: its own scripts,
// styles and images only, its own WebSocket, no frames, forms to itself.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// console is the console's state: its sign-ins, and the live view of the
// sessions the event stream gives.
type console struct {
	f       *Front
	mu      sync.Mutex
	signIns map[string]*signIn // by cookie value
	backoff *signInBackoff
	live    *liveView
	xorigin *http.CrossOriginProtection
}

// signIn is an operator signed in to the console: the path key and CSRF
// token its pages carry, and the token it signed in with (its SHA-256), so
// that it ends when the token leaves the operator file.
type signIn struct {
	operator  string
	key, csrf string
	token     [sha256.Size]byte
	expires   time.Time
	lastSeen  time.Time
}

func newConsole(f *Front) *console {
	c := &console{f: f, signIns: map[string]*signIn{}, backoff: newSignInBackoff(backoffSources), live: newLiveView(), xorigin: http.NewCrossOriginProtection()}
	go c.live.follow(f.cfg.Events)
	return c
}

// routes adds the console's routes to mux.
func (c *console) routes(mux *http.ServeMux) {
	static, _ := fs.Sub(consoleFiles, "console/static")
	page := func(h http.HandlerFunc) http.Handler { return c.f.guard(c.headers(h)) }
	change := func(h http.HandlerFunc) http.Handler { return c.f.guard(c.headers(c.xorigin.Handler(h).ServeHTTP)) }
	mux.Handle("GET /console/static/", c.f.guard(c.headers(http.StripPrefix("/console/static/", http.FileServerFS(static)).ServeHTTP)))
	mux.Handle("GET /console/login", page(c.loginPage))
	mux.Handle("POST /console/login", change(c.login))
	mux.Handle("POST /console/s/{key}/logout", change(c.signedIn(c.logout)))
	mux.Handle("GET /console/s/{key}/{$}", page(c.signedIn(c.index)))
	mux.Handle("GET /console/s/{key}/sessions/{id}", page(c.signedIn(c.session)))
	mux.Handle("GET /console/s/{key}/screenshots/{sha}", page(c.signedIn(c.screenshot)))
	mux.Handle("POST /console/s/{key}/approvals/{id}", change(c.signedIn(c.decide)))
	mux.Handle("POST /console/s/{key}/sessions/{id}/end", change(c.signedIn(c.endSession)))
	mux.Handle("GET /console/s/{key}/events", c.f.guard(c.signedIn(c.events)))
	// The console's front door is the sign-in form: nothing under
	// /console/ tells a cookie's holder the path key.
	mux.Handle("GET /console/{$}", http.RedirectHandler("/console/login", http.StatusSeeOther))
	mux.Handle("GET /console", http.RedirectHandler("/console/login", http.StatusSeeOther))
}

// headers are every console response's: the CSP, no sniffing, no
// referrer, no caching (the pages show arguments of agents' calls).
func (c *console) headers(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make the browser send Origin: null with the console's own forms
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		next(w, r)
	}
}

type signedInHandler func(w http.ResponseWriter, r *http.Request, who *signIn)

// signedIn admits a request of a signed-in operator: the cookie and the
// path key of one sign-in. A page without them is sent to the sign-in
// form, a change refused.
func (c *console) signedIn(next signedInHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who := c.signInOf(r, r.PathValue("key"))
		if who == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/console/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in to the console first", http.StatusUnauthorized)
			return
		}
		next(w, r, who)
	}
}

// signInOf is the sign-in of the request's cookie whose path key is key
// (nil: none, ended, or another key). A sign-in whose operator token left
// the operator file ends here.
func (c *console) signInOf(r *http.Request, key string) *signIn {
	ck, err := r.Cookie(consoleCookie)
	if err != nil || ck.Value == "" || key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.signIns[ck.Value]
	if s == nil || subtle.ConstantTimeCompare([]byte(key), []byte(s.key)) != 1 {
		return nil
	}
	now := c.f.cfg.Now()
	if now.After(s.expires) || now.Sub(s.lastSeen) > signInIdle || !c.f.operators().Holds(s.operator, s.token) {
		delete(c.signIns, ck.Value)
		return nil
	}
	s.lastSeen = now
	return s
}

// render writes a console page through evidence.Visible, as the HTML
// evidence report is written: whatever field an agent's or a page's text
// lands in (arguments, titles, URLs, outputs, reasons, errors, notes), its
// bidirectional, zero-width and control characters show as \uXXXX
// escapes. The templates' own text holds none of them.
func (c *console) render(w http.ResponseWriter, name string, status int, data any) {
	var page bytes.Buffer
	if err := consolePages.ExecuteTemplate(&page, name, data); err != nil {
		c.f.cfg.Logger.Warn("console: page failed", "page", name, "error", err.Error())
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(evidence.Visible(page.String())))
}

func (c *console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, "login.html", http.StatusOK, map[string]any{})
}

// login signs an operator in with their token.
//
// The token is checked first (Operators.Lookup: its SHA-256 against every
// operator's, in constant time), and a right one always signs in, however
// many wrong ones came before from the same address. The back-off is by
// source address, and every agent of the daemon connects from loopback as
// the operator's browser often does: a back-off that applied before the
// check would let any agent lock the operators out of the console, and so
// out of answering its held calls, with one wrong token a minute. Keying
// the back-off by something else would not help: an address is all that
// tells an agent from the operator before the token is read.
//
// Wrong tokens meet the back-off: from an address that failed before,
// each waits 1, 2, 4 … up to 60 s after the last (429 with Retry-After),
// and a wrong token sent while it must wait counts as a failure too. What
// the back-off cannot do is stop a client that ignores Retry-After from
// having each guess checked, since a right token must be admitted at
// once: what makes guessing hopeless is the token itself (32 or more
// characters, of 80 bits or more as toolclad.TokenStrength estimates
// with zxcvbn).
// A right token does not clear the address's failures either: it does
// not show that the wrong ones were its holder's (signInBackoff).
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	addr, _, _ := net.SplitHostPort(r.RemoteAddr)
	name, token := signInToken(c.f.operators(), r.PostFormValue("token"))
	if name == "" {
		if wait := c.failedFrom(addr, r.RemoteAddr); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			c.render(w, "login.html", http.StatusTooManyRequests, map[string]any{"Error": fmt.Sprintf("Too many failed sign-ins from here: try again in %s.", wait.Round(time.Second))})
			return
		}
		c.render(w, "login.html", http.StatusUnauthorized, map[string]any{"Error": "That is not an operator token."})
		return
	}
	id := randomHex()
	now := c.f.cfg.Now()
	s := &signIn{operator: name, key: randomHex(), csrf: randomHex(), token: sha256.Sum256([]byte(token)), expires: now.Add(signInFor), lastSeen: now}
	c.mu.Lock()
	for k, old := range c.signIns {
		if now.After(old.expires) || now.Sub(old.lastSeen) > signInIdle {
			delete(c.signIns, k)
		}
	}
	c.signIns[id] = s
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: id, Path: "/console/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.f.cfg.TLSCert != "", MaxAge: int(signInFor / time.Second)})
	c.f.cfg.Logger.Info("console: operator signed in", "operator", name, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/console/s/"+s.key+"/", http.StatusSeeOther)
}

// failedFrom counts a wrong token from addr and returns how long the
// address had still to wait when it came (0: it was its turn); see
// signInBackoff.
func (c *console) failedFrom(addr, remote string) time.Duration {
	wait, n := c.backoff.failed(addr, c.f.cfg.Now())
	if n <= 3 || n%100 == 0 {
		c.f.cfg.Logger.Warn("console: sign-in refused", "remote", remote, "failures_in_a_row", n)
	}
	return wait
}

func (c *console) logout(w http.ResponseWriter, r *http.Request, who *signIn) {
	if !c.csrfOK(r, who) {
		http.Error(w, "the form's CSRF token is missing or wrong: reload the console", http.StatusForbidden)
		return
	}
	if ck, err := r.Cookie(consoleCookie); err == nil {
		c.mu.Lock()
		delete(c.signIns, ck.Value)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/console/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}

// csrfOK checks the form's CSRF token against the sign-in's.
func (c *console) csrfOK(r *http.Request, who *signIn) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(who.csrf)) == 1
}

// caughtUpWait bounds how long the index waits for the console's view to
// take the events published before it was asked for.
const caughtUpWait = 2 * time.Second

func (c *console) index(w http.ResponseWriter, r *http.Request, who *signIn) {
	// The page shows every event published before it was asked for, and
	// every one its script saw (?seen=SEQ): an event published as the
	// page loads, before its script follows the stream, is not lost.
	seen, _ := strconv.ParseUint(r.URL.Query().Get("seen"), 10, 64)
	c.live.caughtUp(max(seen, c.f.cfg.Events.Seq()), caughtUpWait)
	var held []approval.Request
	if c.f.cfg.Broker != nil {
		held = c.f.cfg.Broker.List()
	}
	c.render(w, "index.html", http.StatusOK, map[string]any{
		"Operator": who.operator, "CSRF": who.csrf, "Base": who.base(), "Held": held, "Answered": c.live.answered(),
		"Sessions": c.live.list(), "CanEnd": c.f.cfg.EndSession != nil, "Now": c.f.cfg.Now(), "Missed": c.live.missedAt(),
	})
}

// events streams the events to the console page, which says when its
// list changed. Only the console's own pages may open it (not those of an
// --allowed-origin, which may call /mcp with an agent's token).
func (c *console) events(w http.ResponseWriter, r *http.Request, who *signIn) {
	if o := r.Header.Get("Origin"); o == "" || !c.f.ownOrigin(o) {
		http.Error(w, "only the console's own pages may follow its events", http.StatusForbidden)
		return
	}
	key := r.PathValue("key")
	c.f.streamEvents(w, r, who.operator, func() bool { return c.signInOf(r, key) != nil })
}

// decide answers a held call from the console, recorded as the console's
// answer with the operator's name.
func (c *console) decide(w http.ResponseWriter, r *http.Request, who *signIn) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !c.csrfOK(r, who) {
		http.Error(w, "the form's CSRF token is missing or wrong: reload the console", http.StatusForbidden)
		return
	}
	verdict := r.PostFormValue("decision")
	if verdict != "approve" && verdict != "deny" && verdict != "answer" {
		http.Error(w, `decision must be "approve", "deny" or "answer"`, http.StatusBadRequest)
		return
	}
	if c.f.cfg.Broker == nil {
		http.Error(w, "this daemon holds no calls for approval", http.StatusNotFound)
		return
	}
	id := r.PathValue("id")
	p := c.f.cfg.Broker.Get(id)
	o := approval.Outcome{Approved: verdict != "deny", Channel: approval.ChannelConsole,
		By: who.operator, Note: strings.TrimSpace(r.PostFormValue("note"))}
	if verdict == "answer" {
		// An answer to a question (await_human); the broker refuses one
		// for a held call, and an empty one.
		o.Answer, o.Secret, o.Answering = r.PostFormValue("answer"), r.PostFormValue("secret") == "yes", true
	}
	err := c.f.cfg.Broker.Decide(id, o)
	switch {
	case p == nil || errors.Is(err, approval.ErrUnknown):
		http.Error(w, "no pending approval "+id+" (already answered, expired, or never held)", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.live.answeredHere(p.Request, o, c.f.cfg.Now())
	// The answer itself is never logged: it may be a secret.
	c.f.cfg.Logger.Warn("approval answered in the console", "id", id, "approved", o.Approved, "answered", verdict == "answer", "operator", who.operator)
	http.Redirect(w, r, who.base()+"/", http.StatusSeeOther)
}

// ErrEndNotRecorded is what Config.EndSession's error wraps when the
// session has ended but the evidence log did not take the record of its
// end: the console shows it as ended, with a warning.
var ErrEndNotRecorded = errors.New("the session has ended, but its end was not recorded")

// endSession ends an open session for the operator: its browser context
// closes, its end is recorded with the operator's name, and the agent's
// next call in it is refused, saying so. The End button asks first: its
// POST without confirm=yes is answered with a page that asks again, so
// that a click meant for something the page moved under the pointer ends
// nothing. A session that ended but whose end the evidence log did not
// take (ErrEndNotRecorded) is shown as ended, with the warning.
func (c *console) endSession(w http.ResponseWriter, r *http.Request, who *signIn) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if !c.csrfOK(r, who) {
		http.Error(w, "the form's CSRF token is missing or wrong: reload the console", http.StatusForbidden)
		return
	}
	if c.f.cfg.EndSession == nil {
		http.Error(w, "this daemon cannot end sessions from the console", http.StatusNotFound)
		return
	}
	id := r.PathValue("id")
	page := map[string]any{"Title": "End session", "Operator": who.operator, "CSRF": who.csrf, "Base": who.base(), "ID": id}
	if r.PostFormValue("confirm") != "yes" {
		c.render(w, "end.html", http.StatusOK, page)
		return
	}
	err := c.f.cfg.EndSession(id, who.operator)
	if err != nil && !errors.Is(err, ErrEndNotRecorded) {
		c.f.cfg.Logger.Warn("console: ending a session failed", "session", id, "operator", who.operator, "error", err.Error())
		http.Error(w, "the session could not be ended: "+err.Error(), http.StatusConflict)
		return
	}
	c.live.endedHere(id, fmt.Sprintf("the operator %s ended it (%s)", who.operator, approval.ChannelConsole), c.f.cfg.Now())
	c.f.cfg.Logger.Warn("session ended in the console", "session", id, "operator", who.operator)
	if err != nil {
		c.f.cfg.Logger.Error("console: a session ended, but its end was not recorded", "session", id, "operator", who.operator, "error", err.Error())
		page["Warning"] = err.Error()
		c.render(w, "end.html", http.StatusOK, page)
		return
	}
	http.Redirect(w, r, who.base()+"/", http.StatusSeeOther)
}

// session shows a session's evidence timeline and whether its chain
// verifies.
func (c *console) session(w http.ResponseWriter, r *http.Request, who *signIn) {
	id := r.PathValue("id")
	store := c.f.cfg.Evidence
	if store == nil {
		http.Error(w, "this daemon has no evidence store", http.StatusNotFound)
		return
	}
	recs, err := store.Records(id)
	if err != nil || len(recs) == 0 {
		http.Error(w, "no such session in the evidence log", http.StatusNotFound)
		return
	}
	var problems []string
	verified := false
	if rep, err := store.Verify(); err != nil {
		problems = append(problems, "the log could not be verified: "+err.Error())
	} else {
		for _, p := range rep.Problems {
			if p.Session == id || p.Session == "" {
				problems = append(problems, p.String())
			}
		}
		verified = len(problems) == 0
	}
	c.render(w, "session.html", http.StatusOK, map[string]any{
		"Operator": who.operator, "CSRF": who.csrf, "Base": who.base(), "ID": id, "Records": recs, "Verified": verified, "Problems": problems,
	})
}

// screenshot serves a screenshot the evidence holds, by its hash.
func (c *console) screenshot(w http.ResponseWriter, r *http.Request, _ *signIn) {
	sha := r.PathValue("sha")
	if _, err := hex.DecodeString(sha); err != nil || len(sha) != 64 || c.f.cfg.Evidence == nil {
		http.NotFound(w, r)
		return
	}
	img, err := c.f.cfg.Evidence.Screenshot(sha)
	typ := evidence.ImageType(img)
	if err != nil || typ == "" {
		http.NotFound(w, r) // bytes that are not an image are not served as one
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Write(img)
}

// base is the path prefix of the sign-in's console pages.
func (s *signIn) base() string { return "/console/s/" + s.key }

func randomHex() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
