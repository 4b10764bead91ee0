package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/internal/testkit"
)

// stateToken is the session cookie the state site hands alice: what a
// state file holds and nothing shows.
const stateToken = "sid-7f3a9c-alice-only"

// stateLocal is what the state site keeps in alice's local storage.
const stateLocal = "ls-41d2-alice-drafts"

// stateSite signs a user in with a cookie (HttpOnly) and a local storage
// item, and says on /me who the cookie and the local storage say is there:
// the sign-in a saved state must carry to another session.
func stateSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		user := r.URL.Query().Get("user")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: stateToken + "-" + user, Path: "/", HttpOnly: true, MaxAge: 3600})
		fmt.Fprintf(w, `<!doctype html><title>signed in</title><script>localStorage.setItem('drafts', %q)</script><p>welcome %s</p>`,
			stateLocal+"-"+user, user)
	})
	mux.HandleFunc("/logout", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "", Path: "/", HttpOnly: true, MaxAge: -1})
		fmt.Fprint(w, `<!doctype html><title>signed out</title><script>localStorage.removeItem('drafts')</script><p>bye</p>`)
	})
	mux.HandleFunc("/me", func(w http.ResponseWriter, r *http.Request) {
		who := "nobody"
		if c, err := r.Cookie("sid"); err == nil && strings.HasPrefix(c.Value, stateToken+"-") {
			who = strings.TrimPrefix(c.Value, stateToken+"-")
		}
		// The page shows who is there, never the token itself.
		fmt.Fprintf(w, `<!doctype html><title>me</title><p id=who>cookie says %s</p><p id=ls></p>
<script>const d = localStorage.getItem('drafts'); document.getElementById('ls').textContent = 'storage says ' + (d && d.startsWith(%q) ? d.slice(%d) : 'nothing')</script>`,
			who, stateLocal+"-", len(stateLocal)+1)
	})
	return mux
}

// stateManifest declares the state commands with a state directory of
// their own beside the upload directory.
func stateManifest(stateDir, up string) string {
	return fmt.Sprintf(e2eManifest, "launch", "") + fmt.Sprintf(`[browser.commands.save_storage_state]
[browser.commands.load_storage_state]
[browser.commands.upload_file]
[browser.files]
state_dir = %q
upload_dir = %q
`, stateDir, up)
}

// stateSetup makes a state and an upload directory (0700) in dir and
// serves stateSite at site.
func stateSetup(t *testing.T) (dir, stateDir, up, site string) {
	t.Helper()
	dir = t.TempDir()
	stateDir, up = filepath.Join(dir, "state"), filepath.Join(dir, "up")
	for _, d := range []string{stateDir, up} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	site, stop, err := serveOn("127.0.0.1:0", stateSite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return dir, stateDir, up, site
}

// TestStorageStateSignsAnotherSessionIn: a session signed in on the site
// saves its state; the file is owner-only and holds the cookie, and
// neither the reply nor the evidence shows any value of it (the evidence
// has the file's name, size and SHA-256). A second session, signed out,
// loads the state once a human approves, and the site sees the same user
// by cookie and by local storage; signed out by the site, it stays so.
func TestStorageStateSignsAnotherSessionIn(t *testing.T) {
	t.Parallel()
	_, stateDir, up, site := stateSetup(t)

	first := startWith(t, stateManifest(stateDir, up))
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=alice"})
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := first.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says alice") || !strings.Contains(out, "storage says alice") {
		t.Fatalf("alice is not signed in on the site:\n%s", out)
	}
	saved := first.mustAllow(t, "e2e.save_storage_state", map[string]any{"name": "alice"})
	if !strings.Contains(saved, "saved state alice (alice.json") || !strings.Contains(saved, "1 cookie(s), local storage of 1 origin(s)") {
		t.Errorf("save_storage_state's reply:\n%s", saved)
	}
	if strings.Contains(saved, stateToken) || strings.Contains(saved, stateLocal) {
		t.Errorf("save_storage_state's reply shows the state's values:\n%s", saved)
	}
	path := filepath.Join(stateDir, "alice.json")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("the state file has mode %04o, want 0600", perm)
	}
	raw, _ := os.ReadFile(path)
	if !bytes.Contains(raw, []byte(stateToken+"-alice")) || !bytes.Contains(raw, []byte(stateLocal+"-alice")) {
		t.Fatalf("the state file lacks the cookie or the local storage:\n%s", raw)
	}
	sum := sha256.Sum256(raw)

	// Loaded on a blank tab: the local storage waits for the site's
	// first document.
	second := startWith(t, stateManifest(stateDir, up))
	h := second.callAsync(t, "e2e.load_storage_state", map[string]any{"name": "alice"})
	id := second.pendingID(t, h)
	if out, err := second.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	loaded, refused := h.wait(t)
	if refused || !strings.Contains(loaded, "loaded state alice (alice.json): 1 cookie(s), local storage of 1 origin(s)") {
		t.Fatalf("load_storage_state:\n%s", loaded)
	}
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := second.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says alice") || !strings.Contains(out, "storage says alice") {
		t.Errorf("the loaded state did not sign the second session in:\n%s", out)
	}
	// What the site does with the state afterwards is the site's: signed
	// out, the session stays signed out (the state is not written again).
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/logout"})
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := second.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says nobody") || !strings.Contains(out, "storage says nothing") {
		t.Errorf("after the site signed the session out:\n%s", out)
	}

	for _, f := range []*fixture{first, second} {
		f.cs.Close()
		direction := map[*fixture]string{first: "state_save", second: "state_load"}[f]
		var files int
		for _, e := range readEnvelopes(t, f.evidence) {
			for _, fr := range e.Files {
				files++
				if fr.Direction != direction || fr.Name != "alice.json" || fr.Size != int64(len(raw)) || fr.SHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("evidence file = %+v, want %s of alice.json, %d bytes, sha256 %x", fr, direction, len(raw), sum)
				}
			}
		}
		if files != 1 {
			t.Errorf("the evidence records %d files, want 1", files)
		}
		db, _ := os.ReadFile(f.evidence)
		if bytes.Contains(db, []byte(stateToken)) || bytes.Contains(db, []byte(stateLocal)) {
			t.Errorf("the evidence holds a value of the state")
		}
		if log := f.stderr.String(); strings.Contains(log, stateToken) || strings.Contains(log, stateLocal) {
			t.Errorf("the daemon's log holds a value of the state")
		}
	}
}

// TestStorageStateLoadRefusals: a state file with a cookie or local
// storage for a site outside the scope is refused whole, before anyone
// is asked and with nothing of it applied (its in-scope cookie does not
// sign the session in); so are a malformed file, one too large, one
// readable by others (as ssh refuses such a key), a symlink out of the
// directory, a name with a path, and a file changed after a human was
// asked about it. Without the scope check the planted file would be put
// to a human rather than refused, and the test fails.
func TestStorageStateLoadRefusals(t *testing.T) {
	t.Parallel()
	dir, stateDir, up, site := stateSetup(t)
	planted := fmt.Sprintf(`{"version": 1, "cookies": [
  {"name": "sid", "value": %q, "domain": "127.0.0.1", "path": "/", "expires": -1, "http_only": true, "secure": false},
  {"name": "track", "value": "x", "domain": ".evil.test", "path": "/", "expires": -1, "http_only": false, "secure": true}],
 "origins": []}`, stateToken+"-mallory")
	storage := fmt.Sprintf(`{"version": 1, "cookies": [
  {"name": "sid", "value": %q, "domain": "127.0.0.1", "path": "/", "expires": -1, "http_only": true, "secure": false}],
 "origins": [{"origin": "https://elsewhere.test:8443", "local_storage": [{"name": "k", "value": "v"}]}]}`, stateToken+"-mallory")
	files := map[string]string{
		"planted.json":   planted,
		"storage.json":   storage,
		"malformed.json": `{"version": 1, "cookies": [{"name": "sid"`,
		"unknown.json":   `{"version": 1, "cookies": [], "origins": [], "extra": true}`,
		"huge.json":      `{"version": 1, "cookies": [], "origins": [], "pad": "` + strings.Repeat("x", 9<<20) + `"}`,
		"open.json":      `{"version": 1, "cookies": [], "origins": []}`,
	}
	for name, body := range files {
		mode := os.FileMode(0o600)
		if name == "open.json" {
			mode = 0o644
		}
		if err := os.WriteFile(filepath.Join(stateDir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WriteFile(t, dir, "outside.json", `{"version": 1, "cookies": [], "origins": []}`)
	if err := os.Symlink(filepath.Join(dir, "outside.json"), filepath.Join(stateDir, "escape.json")); err != nil {
		t.Fatal(err)
	}

	f := startWith(t, stateManifest(stateDir, up))
	for name, want := range map[string]string{
		"planted":          "state planted.json holds cookies or local storage for https://evil.test/, outside the scope",
		"storage":          "https://elsewhere.test:8443/, outside the scope",
		"malformed":        "malformed.json is not a state file save_storage_state wrote",
		"unknown":          `unknown field "extra"`,
		"huge":             "over the 8388608 a state file may have",
		"open":             "open.json has mode 0644, readable or writable by others than its owner: refused, as ssh refuses such a key",
		"escape":           "escape.json is not a regular file",
		"missing":          "no saved state",
		"../state/planted": `argument "name"`,
	} {
		out := f.mustRefuse(t, "e2e.load_storage_state", map[string]any{"name": name}, want)
		if strings.Contains(out, stateToken) {
			t.Errorf("the refusal of %s shows a value of the state:\n%s", name, out)
		}
	}
	if out, _ := f.approvals(t, "list"); strings.Contains(out, "load_storage_state") {
		t.Errorf("a refused load asked a human:\n%s", out)
	}

	// A human approves the state as it was read, by its digest: a file
	// changed while the call waits is another call, and nothing of either
	// is loaded.
	good := fmt.Sprintf(`{"version": 1, "cookies": [
  {"name": "sid", "value": %q, "domain": "127.0.0.1", "path": "/", "expires": -1, "http_only": true, "secure": false}], "origins": []}`, stateToken+"-mallory")
	if err := os.WriteFile(filepath.Join(stateDir, "good.json"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(good))
	h := f.callAsync(t, "e2e.load_storage_state", map[string]any{"name": "good"})
	id := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, hex.EncodeToString(sum[:])) || strings.Contains(out, stateToken) {
		t.Errorf("approvals list does not show the state file's digest, or shows a value of it:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(stateDir, "good.json"), []byte(strings.Replace(good, "mallory", "eve", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if out, refused := h.wait(t); !refused || !strings.Contains(out, "file changed") {
		t.Errorf("a load whose file changed after the question was asked:\n%s", out)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says nobody") {
		t.Errorf("a refused load applied its in-scope cookie:\n%s", out)
	}
}

// TestStorageStateAutoloaded: [browser.files] autoload_state loads a
// state as the session begins, judged as load_storage_state judges it
// but without a human (the operator named it): the first call's reply
// says so, the site sees the user signed in, and the first record lists
// the file. A state with a cookie for a site outside the scope refuses
// every call of the session, saying why, and is never applied.
func TestStorageStateAutoloaded(t *testing.T) {
	t.Parallel()
	_, stateDir, up, site := stateSetup(t)
	cookie := func(value, domain string) string {
		return fmt.Sprintf(`{"name": "sid", "value": %q, "domain": %q, "path": "/", "expires": -1, "http_only": true, "secure": false}`, value, domain)
	}
	for name, body := range map[string]string{
		"carol":   `{"version": 1, "cookies": [` + cookie(stateToken+"-carol", "127.0.0.1") + `], "origins": []}`,
		"planted": `{"version": 1, "cookies": [` + cookie(stateToken+"-carol", "127.0.0.1") + `, ` + cookie("x", "evil.test") + `], "origins": []}`,
	} {
		if err := os.WriteFile(filepath.Join(stateDir, name+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	autoload := func(name string) string {
		return strings.Replace(stateManifest(stateDir, up), "[browser.files]\n", fmt.Sprintf("[browser.files]\nautoload_state = %q\n", name), 1)
	}

	f := startWith(t, autoload("carol"))
	if out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"}); !strings.Contains(out, "loaded state carol (carol.json) as the session began") || strings.Contains(out, stateToken) {
		t.Errorf("the first reply does not say the state was loaded, or shows a value of it:\n%s", out)
	}
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says carol") {
		t.Errorf("the autoloaded state did not sign the session in:\n%s", out)
	}
	f.cs.Close()
	envs := readEnvelopes(t, f.evidence)
	if len(envs) == 0 || len(envs[0].Files) != 1 || envs[0].Files[0].Direction != "state_load" || envs[0].Files[0].Name != "carol.json" {
		t.Errorf("the first record does not list the autoloaded state file: %+v", envs)
	}

	g := startWith(t, autoload("planted"))
	for range 2 {
		g.mustRefuse(t, "e2e.navigate", map[string]any{"url": site + "/me"}, "autoload_state", "http://evil.test/, outside the scope")
	}
}

// TestStorageStateSaveNeverReplacesUnasked: the agent cannot write over
// the operator's autoload_state (refused, saying why; the next session,
// autoloaded without a human, is still the operator's), and a save over
// any other existing state waits for a human (denied: the old file stays;
// approved: replaced), while a new name is saved at once. The file
// records the session that saved it and when, and the human asked about
// a load sees that, with the cookies' domains and the origins, never a
// value. Without the refusal or the approval the next session starts
// signed in as whoever the agent chose, and the test fails.
func TestStorageStateSaveNeverReplacesUnasked(t *testing.T) {
	t.Parallel()
	_, stateDir, up, site := stateSetup(t)
	carol := fmt.Sprintf(`{"version": 1, "cookies": [{"name": "sid", "value": %q, "domain": "127.0.0.1", "path": "/", "expires": -1, "http_only": true, "secure": false}], "origins": []}`, stateToken+"-carol")
	if err := os.WriteFile(filepath.Join(stateDir, "carol.json"), []byte(carol), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(stateManifest(stateDir, up), "[browser.files]\n", "[browser.files]\nautoload_state = \"carol\"\n", 1)
	read := func(name string) string {
		raw, _ := os.ReadFile(filepath.Join(stateDir, name+".json"))
		return string(raw)
	}

	first := startWith(t, manifest)
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=mallory"})
	first.mustRefuse(t, "e2e.save_storage_state", map[string]any{"name": "carol"}, "autoload_state", "the operator's to write")
	if read("carol") != carol {
		t.Fatal("a refused save changed the operator's autoload_state")
	}
	// A new name: saved at once, with the session and the time.
	first.mustAllow(t, "e2e.save_storage_state", map[string]any{"name": "alice"})
	var saved struct {
		SavedBy string `json:"saved_by"`
		SavedAt string `json:"saved_at"`
	}
	if err := json.Unmarshal([]byte(read("alice")), &saved); err != nil || saved.SavedBy == "" || saved.SavedAt == "" {
		t.Fatalf("the state file does not record who saved it and when (%v):\n%s", err, read("alice"))
	}
	before := read("alice")
	// Over an existing name: a human decides. Denied, the file stays.
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=eve"})
	h := first.callAsync(t, "e2e.save_storage_state", map[string]any{"name": "alice"})
	id := first.pendingID(t, h)
	if out, _ := first.approvals(t, "list"); !strings.Contains(out, "would replace the saved state") || !strings.Contains(out, "alice.json") {
		t.Errorf("the human is not told the save replaces a state:\n%s", out)
	}
	if out, err := first.approvals(t, "deny", id, "--by", "bob"); err != nil {
		t.Fatalf("deny: %v\n%s", err, out)
	}
	if out, refused := h.wait(t); !refused {
		t.Errorf("a denied save over a state ran:\n%s", out)
	}
	if read("alice") != before {
		t.Fatal("a denied save replaced the state")
	}
	// Approved, it replaces the state.
	h = first.callAsync(t, "e2e.save_storage_state", map[string]any{"name": "alice"})
	if out, err := first.approvals(t, "approve", first.pendingID(t, h), "--by", "bob"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if out, refused := h.wait(t); refused || !strings.Contains(read("alice"), stateToken+"-eve") {
		t.Errorf("an approved save over a state (refused=%v):\n%s", refused, out)
	}
	first.cs.Close()

	second := startWith(t, manifest)
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := second.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "cookie says carol") {
		t.Errorf("the next session, autoloaded without a human, is not carol's:\n%s", out)
	}
	// The human asked about a load sees who saved the state and when,
	// and where it signs in to.
	h = second.callAsync(t, "e2e.load_storage_state", map[string]any{"name": "alice"})
	id = second.pendingID(t, h)
	out, _ := second.approvals(t, "list")
	if !strings.Contains(out, "by session "+saved.SavedBy) || !strings.Contains(out, `"state_cookie_domains":["127.0.0.1"]`) || !strings.Contains(out, `"state_origins":["`+site+`"]`) {
		t.Errorf("the load's question does not say who saved the state, when, and where it signs in to:\n%s", out)
	}
	if strings.Contains(out, stateToken) || strings.Contains(out, stateLocal) {
		t.Errorf("the load's question shows a value of the state:\n%s", out)
	}
	if out, err := second.approvals(t, "deny", id, "--by", "bob"); err != nil {
		t.Fatalf("deny: %v\n%s", err, out)
	}
	h.wait(t)
}

// TestStorageStateReachesTheSessionsLaterTabs: a state loaded on a blank
// tab reaches the site's first document in a tab the session opens
// afterwards (local storage is the browser context's, written as the
// origin's first document begins in whichever of the session's tabs that
// is); and once it has, a later document of the site in the first tab
// keeps what the site made of the storage since (here: signed out), not
// the state's items written again.
func TestStorageStateReachesTheSessionsLaterTabs(t *testing.T) {
	t.Parallel()
	_, stateDir, up, site := stateSetup(t)
	first := startWith(t, stateManifest(stateDir, up))
	first.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/login?user=alice"})
	first.mustAllow(t, "e2e.save_storage_state", map[string]any{"name": "alice"})

	second := startWith(t, stateManifest(stateDir, up))
	h := second.callAsync(t, "e2e.load_storage_state", map[string]any{"name": "alice"})
	if out, err := second.approvals(t, "approve", second.pendingID(t, h), "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if loaded, refused := h.wait(t); refused {
		t.Fatalf("load_storage_state:\n%s", loaded)
	}
	second.mustAllow(t, "e2e.new_tab", map[string]any{"url": site + "/me"})
	if out := second.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "storage says alice") {
		t.Errorf("the loaded state's local storage did not reach the site's first document in a later tab:\n%s", out)
	}
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/logout"})
	second.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": "t1"})
	second.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/me"})
	if out := second.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "storage says nothing") {
		t.Errorf("the first tab wrote the state's local storage again over what the site made of it:\n%s", out)
	}
}
