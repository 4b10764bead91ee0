package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
)

// save_storage_state and load_storage_state: a session's signed-in state
// (its browser context's cookies, the local storage of the current
// page's origin) kept in a file of the manifest's state directory
// (statefile.go). Nothing of the state reaches the agent: the replies
// name the file and count cookies and origins, and the record holds the
// file's name, size and SHA-256. A load is decided on the file as read
// (observeStorageState): a cookie or an origin outside the scope refuses
// the whole file, before any of it is applied.

// errStateLive: live mode keeps the user's own state.
var errStateLive = errors.New("save_storage_state and load_storage_state run on a browser of the session's own (launch mode, remote browsers): in live mode the user's browser keeps its own signed-in state, which the session neither exports nor overwrites")

// observeStorageState reads what a state command needs decided: for a
// load, the file, parsed, with where its contents would go.
func (s *session) observeStorageState(name string, load bool) *gate.StorageState {
	st := &gate.StorageState{File: evidence.FileRef{Name: stateFileName(name)}}
	if s.backend.key.connect == "live" {
		st.Err = errStateLive
		return st
	}
	if !load {
		st.Replaces, st.Err = s.saveTarget(name)
		return st
	}
	parsed, ref, err := readState(s.manifest.Browser.Files, name)
	st.File, st.Err = ref, err
	if err != nil {
		return st
	}
	st.Sites, st.Parsed = parsed.sites(), parsed
	// A value of a manifest secret in the file may go only to that
	// secret's domains (checked per site by the gate).
	var values []byte
	for _, c := range parsed.Cookies {
		values = append(append(values, c.Value...), 0)
	}
	for _, o := range parsed.Origins {
		for _, it := range o.LocalStorage {
			values = append(append(append(values, it.Name...), 0), it.Value...)
		}
	}
	st.Holds = s.secrets.Load().HeldInBytes(values)
	return st
}

// saveTarget checks that the state directory opens, owner-only, and that
// a state may be saved under name: never as the manifest's
// autoload_state (the operator's to write), and replacing a state of
// that name only with a human's approval (replaces).
func (s *session) saveTarget(name string) (replaces bool, err error) {
	if name == s.manifest.Browser.Files.AutoloadState {
		return false, fmt.Errorf("state %q is the manifest's [browser.files] autoload_state, which every session loads without a human: it is the operator's to write, and save_storage_state never replaces it (save under another name)", name)
	}
	root, err := openStateDir(s.manifest.Browser.Files)
	if err != nil {
		return false, err
	}
	defer root.Close()
	_, err = root.Lstat(stateFileName(name))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("state %q: %v", name, unwrapPath(err))
}

func actSaveStorageState(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	name, _ := args["name"].(string)
	cookies, err := chromedp.CallBrowser(ctx, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: s.tab.browserID})
	if err != nil {
		return output{}, fmt.Errorf("read the session's cookies: %w", err)
	}
	st := &storageState{Version: stateVersion, SavedBy: s.id, SavedAt: time.Now().UTC().Format(time.RFC3339),
		Cookies: []stateCookie{}, Origins: []stateOrigin{}}
	left := 0
	for _, c := range cookies.Cookies {
		sc := stateCookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: c.Expires,
			HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)}
		if c.Session {
			sc.Expires = -1
		}
		if c.PartitionKey != nil || c.PartitionKeyOpaque || !s.check(sc.site()).Allowed {
			// A site outside the scope; or a partitioned cookie, which
			// set again without its partition would reach more sites
			// than it did.
			left++
			continue
		}
		st.Cookies = append(st.Cookies, sc)
	}
	if o, ok := webOrigin(f.State.URL); ok && s.check(o+"/").Allowed {
		var items [][2]string
		if err := s.evalValueInWorld(ctx, `Object.entries(localStorage)`, &items); err != nil {
			return output{}, fmt.Errorf("read the local storage of %s: %w", o, err)
		}
		if len(items) > 0 {
			so := stateOrigin{Origin: o}
			for _, it := range items {
				so.LocalStorage = append(so.LocalStorage, stateItem{Name: it[0], Value: it[1]})
			}
			st.Origins = append(st.Origins, so)
		}
	}
	// A state that did not exist when the call was judged is created,
	// never replaced: one saved meanwhile (by another session) was not
	// approved for replacing.
	ref, err := writeState(s.manifest.Browser.Files, name, st, f.StorageState != nil && f.StorageState.Replaces)
	if err != nil {
		return output{}, err
	}
	text := fmt.Sprintf("saved state %s (%s, %d bytes): %d cookie(s), local storage of %d origin(s)", name, ref.Name, ref.Size, len(st.Cookies), len(st.Origins))
	if left > 0 {
		text += fmt.Sprintf("; %d cookie(s) left out (of sites outside the scope, or partitioned)", left)
	}
	return output{Text: text, Files: []evidence.FileRef{ref}}, nil
}

func actLoadStorageState(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	name, _ := args["name"].(string)
	st, ok := f.StorageState.Parsed.(*storageState)
	if f.StorageState == nil || !ok {
		return output{}, errors.New("the saved state was not read")
	}
	if err := s.applyState(ctx, st, f.State.URL); err != nil {
		return output{}, err
	}
	ref := f.StorageState.File
	return output{Text: fmt.Sprintf("loaded state %s (%s): %s", name, ref.Name, st.counts()), Files: []evidence.FileRef{ref}}, nil
}

// describe tells the human asked about a load what the state is: the
// session that saved it and when, and the cookies' domains and the
// origins it would sign in to (no name or value of any of them).
func (st *storageState) describe(args map[string]any) {
	saved := "not recorded (a file save_storage_state did not write)"
	if st.SavedBy != "" {
		saved = "by session " + st.SavedBy + " at " + st.SavedAt
	}
	domains, origins := []string{}, []string{}
	for _, c := range st.Cookies {
		if !slices.Contains(domains, c.Domain) {
			domains = append(domains, c.Domain)
		}
	}
	for _, o := range st.Origins {
		origins = append(origins, o.Origin)
	}
	args["state_saved"], args["state_cookie_domains"], args["state_origins"] = saved, domains, origins
}

// counts says what a state holds, without a value.
func (st *storageState) counts() string {
	return fmt.Sprintf("%d cookie(s), local storage of %d origin(s)", len(st.Cookies), len(st.Origins))
}

// applyState sets a state's cookies in the session's browser context and
// restores its local storage (current: the current page's URL).
func (s *session) applyState(ctx context.Context, st *storageState, current string) error {
	params := storage.SetCookiesParams{BrowserContextID: s.tab.browserID, Cookies: []*network.CookieParam{}}
	for _, c := range st.Cookies {
		p := &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure,
			HTTPOnly: c.HTTPOnly, SameSite: network.CookieSameSite(c.SameSite)}
		if c.Expires > 0 {
			p.Expires = cdp.TimeSinceEpoch(c.Expires)
		}
		params.Cookies = append(params.Cookies, p)
	}
	if len(params.Cookies) > 0 {
		if _, err := chromedp.CallBrowser(ctx, storage.SetCookies, params); err != nil {
			return fmt.Errorf("set the state's cookies: %w", err)
		}
	}
	return s.restoreLocalStorage(ctx, st.Origins, current)
}

// stateWorld is the isolated world the local storage of a loaded state
// is written from, apart from observe's and the guard's.
const stateWorld = "browsergate-state"

// stateScripts are the local storage of a loaded state waiting for its
// origin's first document, by origin (pending), and the scripts still in
// a tab the session is not on for an origin that has loaded since
// (stale).
type stateScripts struct {
	pending map[string]*pendingOrigin
	stale   map[target.ID][]page.ScriptIdentifier
}

// pendingOrigin is a loaded origin's local storage waiting for that
// origin's first document: the script that writes it (set), and the
// session's tabs it was added to, with its identifier in each.
type pendingOrigin struct {
	set  string
	tabs map[target.ID]page.ScriptIdentifier
}

// restoreLocalStorage writes each origin's items into its local storage:
// at once for the current page's origin, and for the others as the first
// document of that origin begins in any of the session's tabs (a script
// of an isolated world, which the page cannot read; added to the current
// tab now and to each tab the session switches to later, followStateScripts,
// and retired by retireStateScripts once a document of the origin has
// loaded).
func (s *session) restoreLocalStorage(ctx context.Context, origins []stateOrigin, current string) error {
	here, _ := webOrigin(current)
	for _, o := range origins {
		items, err := json.Marshal(o.LocalStorage)
		if err != nil {
			return err
		}
		set := fmt.Sprintf(`for (const it of %s) localStorage.setItem(it.name, it.value)`, items)
		if o.Origin == here {
			var done bool
			if err := s.evalValueInWorld(ctx, set+`; true`, &done); err != nil {
				return fmt.Errorf("write the local storage of %s: %w", o.Origin, err)
			}
			continue
		}
		s.dropStateScript(ctx, o.Origin) // a later load replaces an earlier one
		origin, _ := json.Marshal(o.Origin)
		p := &pendingOrigin{set: fmt.Sprintf(`if (location.origin === %s) { %s }`, origin, set), tabs: map[target.ID]page.ScriptIdentifier{}}
		if s.stateScripts.pending == nil {
			s.stateScripts.pending = map[string]*pendingOrigin{}
		}
		s.stateScripts.pending[o.Origin] = p
		if err := s.addStateScript(ctx, p); err != nil {
			return fmt.Errorf("prepare the local storage of %s: %w", o.Origin, err)
		}
	}
	return nil
}

// addStateScript adds p's script to the current tab.
func (s *session) addStateScript(ctx context.Context, p *pendingOrigin) error {
	id := s.tab.targetID()
	if _, ok := p.tabs[id]; ok {
		return nil
	}
	res, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: p.set, WorldName: stateWorld})
	if err != nil {
		return err
	}
	p.tabs[id] = res.Identifier
	return nil
}

// followStateScripts adds the local storage still waiting for its origin
// to the tab the session has just made current (a tab it opened, a popup,
// a tab of its own it switched back to), and takes out of it what a
// document of its origin loaded elsewhere meanwhile.
func (s *session) followStateScripts(ctx context.Context) {
	id := s.tab.targetID()
	for _, sc := range s.stateScripts.stale[id] {
		_, _ = chromedp.Call(ctx, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: sc})
	}
	delete(s.stateScripts.stale, id)
	for origin, p := range s.stateScripts.pending {
		if err := s.addStateScript(ctx, p); err != nil {
			s.backend.logger.Warn("the local storage of a loaded state could not follow the session into a tab", "session", s.id, "origin", origin, "error", err)
		}
	}
}

// retireStateScripts removes the script of the current page's origin
// from the current tab: the document of that origin that loaded since
// has its local storage, and a later one must keep what the page made
// of it.
func (s *session) retireStateScripts(ctx context.Context, url string) {
	if o, ok := webOrigin(url); ok {
		s.retireStateScript(ctx, o)
	}
}

func (s *session) retireStateScript(ctx context.Context, origin string) {
	p, ok := s.stateScripts.pending[origin]
	if !ok {
		return
	}
	if _, here := p.tabs[s.tab.targetID()]; !here {
		return // loaded in a tab the script never reached: it waits on
	}
	s.dropStateScript(ctx, origin)
}

// dropStateScript takes origin's waiting script out of the current tab
// now, and out of the session's other tabs as each becomes current again
// (followStateScripts).
func (s *session) dropStateScript(ctx context.Context, origin string) {
	p, ok := s.stateScripts.pending[origin]
	if !ok {
		return
	}
	delete(s.stateScripts.pending, origin)
	cur := s.tab.targetID()
	for id, sc := range p.tabs {
		if id == cur {
			_, _ = chromedp.Call(ctx, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: sc})
			continue
		}
		if s.stateScripts.stale == nil {
			s.stateScripts.stale = map[target.ID][]page.ScriptIdentifier{}
		}
		s.stateScripts.stale[id] = append(s.stateScripts.stale[id], sc)
	}
}
