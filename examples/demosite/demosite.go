// Package demosite is the small web application browsergate's quick start,
// demo and end-to-end tests browse: a home page, a login form, a dashboard
// behind a session cookie, and a page that links to a forbidden host. It
// serves on loopback only.
package demosite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"sync"
	"sync/atomic"
)

// Options configure the site.
type Options struct {
	// ForbiddenURL is a URL outside the demo manifest's scope that the
	// "elsewhere" page links to (the canary in tests).
	ForbiddenURL string
}

// Site is the demo application. It keeps its sessions in memory.
type Site struct {
	opts     Options
	mu       sync.Mutex
	sessions map[string]string // cookie value -> user
	// Submissions counts profile form posts, so tests can see a submit land.
	Submissions atomic.Int64
	// SwitchForms tells the /trap/switch page to retarget its form (the
	// page polls for it), and Switched counts the pages that did: a test
	// changes a page under a held call, then approves.
	SwitchForms atomic.Bool
	Switched    atomic.Int64
	// Echoed is the last value the /echo form sent, so a test can see
	// what was really typed (a secret's value, not its placeholder).
	Echoed atomic.Value
	// Password, when set (a string), is the only password /login accepts;
	// by default any non-empty one is.
	Password atomic.Value
}

// New returns the demo site.
func New(opts Options) *Site {
	return &Site{opts: opts, sessions: map[string]string{}}
}

var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}label{display:block;margin:.5em 0}</style></head><body>
<nav><a href="/">Home</a> · <a href="/login">Sign in</a> · <a href="/docs">Docs</a> · <a href="/elsewhere">Elsewhere</a></nav>{{end}}
{{define "home"}}{{template "head" .}}<main><h1>Acme Portal</h1><p>Welcome to the Acme demo portal. Sign in to see your dashboard.</p></main></body></html>{{end}}
{{define "login"}}{{template "head" .}}<main><h1>Sign in</h1>{{if .Error}}<p role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form></main></body></html>{{end}}
{{define "dashboard"}}{{template "head" .}}<main><h1>Dashboard</h1><p>Welcome, {{.User}}!</p>
<form method="post" action="/profile"><label>Display name <input name="display" value="{{.User}}"></label><button type="submit">Save profile</button></form>
{{if .Saved}}<p role="status">Profile saved.</p>{{end}}
<p><a href="/logout">Log out</a></p></main></body></html>{{end}}
{{define "docs"}}{{template "head" .}}<main><h1>Documentation</h1>
<h2>Getting started</h2><p>The portal keeps your projects, invoices and team in one place.</p>
<h2>Projects</h2><p>Create a project from the dashboard. Each project has members and a budget.</p>
<h2>Invoices</h2><p>Invoices are issued monthly.</p></main></body></html>{{end}}
{{define "jump"}}{{template "head" .}}<main><h1>Jump</h1>
<button id="go" onclick="location.href = {{.Forbidden}}">Go</button></main></body></html>{{end}}
{{define "trap-form"}}{{template "head" .}}<main><h1>Feedback</h1>
<form id="f" method="post" action="{{.Forbidden}}"><input type="hidden" name="action" value="/"><label>Comment <input id="u" name="comment"></label><button>Send</button></form></main></body></html>{{end}}
{{define "trap-liar"}}{{template "head" .}}<main><h1>Feedback</h1>
<form id="f" method="post" action="{{.Forbidden}}"><label>Comment <input id="u" name="comment"></label><button>Send</button></form>
<script>
// A page that tries to lie to inspection scripts running in its world.
Object.getOwnPropertyDescriptor = () => ({get: () => location.href});
Element.prototype.closest = () => null;
HTMLFormElement.prototype.requestSubmit = HTMLFormElement.prototype.requestSubmit;
</script></main></body></html>{{end}}
{{define "trap-overlay"}}{{template "head" .}}<main><h1>Overlay</h1>
<p style="position:relative"><a id="docs" href="/docs">Read the docs</a><a id="cover" href="{{.Forbidden}}" style="position:absolute;left:0;top:0;width:100%;height:100%;opacity:0.01">x</a></p></main></body></html>{{end}}
{{define "trap-popup"}}{{template "head" .}}<main><h1>Popup</h1>
<button id="open" onclick="window.open({{.Forbidden}})">Open</button></main></body></html>{{end}}
{{define "trap-later"}}{{template "head" .}}<main><h1>Later</h1><p>This page moves by itself.</p>
<script>setTimeout(() => { location.href = {{.Forbidden}}; }, 200);</script></main></body></html>{{end}}
{{define "trap-switch"}}{{template "head" .}}<main><h1>Switch</h1>
<form id="f" method="post" action="/profile"><label>Display name <input name="display" value="x"></label><button>Save</button></form>
<script>
// Once told to, the page points its form somewhere else (still in scope).
const poll = setInterval(async () => {
  if ((await (await fetch('/trap/switch-state')).text()) !== 'switch') return;
  clearInterval(poll);
  document.getElementById('f').action = '/profile?retargeted=1';
  fetch('/trap/switched');
}, 100);
</script></main></body></html>{{end}}
{{define "echo"}}{{template "head" .}}<main><h1>Echo</h1>
<form method="get" action="{{if .User}}{{.User}}{{else}}/echo{{end}}"><label>Value <input id="v" name="v" autocomplete="off"></label><button>Send</button></form>
<p>You typed: <span id="mirror"></span></p>
<script>
// The page repeats what is typed, and logs it: every sink a secret could
// leak through.
const v = document.getElementById('v');
v.addEventListener('input', () => { document.getElementById('mirror').textContent = v.value; console.log('typed', v.value); });
</script>
{{if .Error}}<p id="sent">Sent: {{.Error}}</p>{{end}}
{{if .Forbidden}}<iframe id="f" src="{{.Forbidden}}"></iframe>{{end}}</main></body></html>{{end}}
{{define "elsewhere"}}{{template "head" .}}<main><h1>Elsewhere</h1><p>This link leaves the allowed scope.</p>
<p><a id="forbidden" href="{{.Forbidden}}">Forbidden site</a></p></main></body></html>{{end}}
`))

type page struct {
	Title, Error, User, Forbidden string
	Saved                         bool
}

func (s *Site) render(w http.ResponseWriter, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (s *Site) user(r *http.Request) string {
	c, err := r.Cookie("session")
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// ServeHTTP serves the site.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		s.render(w, "home", page{Title: "Acme Portal"})
	case "/docs":
		s.render(w, "docs", page{Title: "Documentation"})
	case "/elsewhere":
		s.render(w, "elsewhere", page{Title: "Elsewhere", Forbidden: s.opts.ForbiddenURL})
	case "/trap/form", "/trap/overlay", "/trap/liar":
		// Traps for the gate: a form whose action leaves the scope (with a
		// field named "action" that shadows form.action in scripts), the
		// same form on a page that redefines the built-ins inspection
		// scripts use, and a near-invisible out-of-scope link laid over an
		// in-scope one.
		s.render(w, r.URL.Path[1:5]+"-"+r.URL.Path[6:], page{Title: "Trap", Forbidden: s.opts.ForbiddenURL})
	case "/trap/popup", "/trap/later":
		// A popup, and a page that navigates by itself, to ?to=URL.
		s.render(w, r.URL.Path[1:5]+"-"+r.URL.Path[6:], page{Title: "Trap", Forbidden: r.URL.Query().Get("to")})
	case "/echo":
		v := r.URL.Query().Get("v")
		if v != "" {
			s.Echoed.Store(v)
		}
		// ?action=URL sends the form elsewhere; ?frame=URL adds an iframe.
		q := r.URL.Query()
		s.render(w, "echo", page{Title: "Echo", Error: v, User: q.Get("action"), Forbidden: q.Get("frame")})
	case "/trap/switch":
		s.render(w, "trap-switch", page{Title: "Switch"})
	case "/trap/switch-state":
		if s.SwitchForms.Load() {
			fmt.Fprint(w, "switch")
		}
	case "/trap/switched":
		s.Switched.Add(1)
	case "/jump":
		// A script navigation: the button sends the tab to ?to=URL.
		s.render(w, "jump", page{Title: "Jump", Forbidden: r.URL.Query().Get("to")})
	case "/login":
		if r.Method != http.MethodPost {
			s.render(w, "login", page{Title: "Sign in"})
			return
		}
		user, pass := r.PostFormValue("username"), r.PostFormValue("password")
		if user == "" || pass == "" {
			s.render(w, "login", page{Title: "Sign in", Error: "Enter a username and a password."})
			return
		}
		if want, _ := s.Password.Load().(string); want != "" && pass != want {
			s.render(w, "login", page{Title: "Sign in", Error: "Wrong password."})
			return
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		s.mu.Lock()
		s.sessions[id] = user
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "session", Value: id, Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	case "/dashboard":
		u := s.user(r)
		if u == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		s.render(w, "dashboard", page{Title: "Dashboard", User: u, Saved: r.URL.Query().Get("saved") == "1"})
	case "/profile":
		if s.user(r) == "" || r.Method != http.MethodPost {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		s.Submissions.Add(1)
		http.Redirect(w, r, "/dashboard?saved=1", http.StatusSeeOther)
	case "/logout":
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "", Path: "/", MaxAge: -1})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	default:
		http.NotFound(w, r)
	}
}

// Canary is an HTTP handler that counts every request it receives. Put it
// on an address the scope forbids: a test passes only if it stays at zero.
type Canary struct {
	hits atomic.Int64
	mu   sync.Mutex
	seen []string
}

// ServeHTTP counts the request.
func (c *Canary) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.hits.Add(1)
	c.mu.Lock()
	c.seen = append(c.seen, r.Method+" "+r.Host+r.URL.String())
	c.mu.Unlock()
	fmt.Fprintln(w, "canary: this request should never have been made")
}

// Hits is the number of requests the canary has seen.
func (c *Canary) Hits() int64 { return c.hits.Load() }

// Seen lists the requests the canary has seen ("METHOD host/path").
func (c *Canary) Seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}
