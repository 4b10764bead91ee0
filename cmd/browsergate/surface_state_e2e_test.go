package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// The command-surface suite's steps for signed-in state and browser
// contexts: save and load on a browser of the session's own, a second
// context beside the first where the daemon opens contexts, and
// refusals that say why elsewhere.

// surfaceStateDir is the suite's state directory, owner-only, beside the
// upload directory up.
func surfaceStateDir(up string) string { return filepath.Join(filepath.Dir(up), "state") }

// surfaceStatePages signs the suite in with a cookie (/state/in), out
// (/state/out), and says whether it is (/state/me).
func surfaceStatePages(mux *http.ServeMux) {
	mux.HandleFunc("/state/in", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "surface", Value: "signed-in", Path: "/", MaxAge: 3600})
		fmt.Fprint(w, `<!doctype html><title>in</title><p>in</p>`)
	})
	mux.HandleFunc("/state/out", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "surface", Value: "", Path: "/", MaxAge: -1})
		fmt.Fprint(w, `<!doctype html><title>out</title><p>out</p>`)
	})
	mux.HandleFunc("/state/me", func(w http.ResponseWriter, r *http.Request) {
		state := "signed out"
		if c, err := r.Cookie("surface"); err == nil && c.Value == "signed-in" {
			state = "signed in"
		}
		fmt.Fprintf(w, `<!doctype html><title>me</title><p>state: %s</p>`, state)
	})
}

// runState saves the session's sign-in, signs out, loads it back (with
// the operator's approval) and finds the session signed in again. In the
// user's browser both commands are refused, saying why.
func (s *surface) runState(t *testing.T) {
	defer s.runContexts(t)
	if s.live {
		for _, cmd := range []string{"save_storage_state", "load_storage_state"} {
			s.covered[cmd] = true
			s.f.mustRefuse(t, s.tool+"."+cmd, map[string]any{"name": "surface"}, "in live mode the user's browser keeps its own signed-in state")
		}
		return
	}
	s.allow(t, "navigate", map[string]any{"url": s.site + "/state/in"})
	s.allow(t, "save_storage_state", map[string]any{"name": "surface"}, "saved state surface (surface.json", "cookie(s)")
	s.allow(t, "navigate", map[string]any{"url": s.site + "/state/out"})
	s.allow(t, "navigate", map[string]any{"url": s.site + "/state/me"})
	s.allow(t, "snapshot", nil, "state: signed out")
	if out := s.approved(t, "load_storage_state", map[string]any{"name": "surface"}, ""); !strings.Contains(out, "loaded state surface (surface.json): ") {
		t.Errorf("load_storage_state:\n%s", out)
	}
	s.allow(t, "reload", nil)
	s.allow(t, "snapshot", nil, "state: signed in")
}

// runContexts opens a second browser context beside the first, signed
// in by runState's load, and finds it signed out; switching back finds
// the first signed in. In the user's browser context and on a remote
// browser new_context is refused, saying why.
func (s *surface) runContexts(t *testing.T) {
	s.allow(t, "switch_context", map[string]any{"context": "c1"}, "c1 is the current browser context")
	switch {
	case s.live:
		s.covered["new_context"] = true
		s.f.mustRefuse(t, s.tool+".new_context", nil, "in the user's browser context")
		return
	case s.remote:
		s.covered["new_context"] = true
		s.f.mustRefuse(t, s.tool+".new_context", nil, "not offered on remote browsers")
		return
	}
	s.allow(t, "new_context", nil, "opened browser context c2")
	s.allow(t, "navigate", map[string]any{"url": s.site + "/state/me"})
	s.allow(t, "snapshot", nil, "state: signed out")
	s.allow(t, "switch_context", map[string]any{"context": "c1"}, "switched to browser context c1")
	s.allow(t, "reload", nil)
	s.allow(t, "snapshot", nil, "state: signed in")
}
