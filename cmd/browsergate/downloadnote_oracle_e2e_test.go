package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestABackgroundTabsDownloadNoteIsNoOracle: the hostile page, in a tab
// the agent left for the secret's site, downloads its two guesses (in the
// URL and the file name). The replies on the site's tab tell of both
// downloads alike: a download's note is masked for the documents that may
// have chosen its URL, not for the page the call reads.
func TestABackgroundTabsDownloadNoteIsNoOracle(t *testing.T) {
	t.Parallel()
	const password = "Dl-Guess-Note-6620"
	down := t.TempDir()
	manifest := networkLogsManifest + fmt.Sprintf(`
[browser.commands.download]
[browser.files]
download_dir = %q
`, down)
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	dl := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dl" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Disposition", "attachment")
		fmt.Fprint(w, "a file")
	}
	_, call, _, _ := backgroundHostile(t, d, "", `for (const g of ['`+wrongGuess+`', '`+password+`']) {
    const a = document.createElement('a');
    a.href = '/dl?g=' + g; a.download = 'g-' + g + '.txt';
    document.body.append(a); a.click();
    await new Promise(r => setTimeout(r, 300));
  }`, dl)
	var out string
	for deadline := time.Now().Add(20 * time.Second); strings.Count(out, "\ndownload") < 2; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replies on the site's tab tell of no two downloads:\n%s", out)
		}
		out += call("snapshot", nil)
	}
	t.Logf("the replies' download notes:\n%s", out)
	guessesAlike(t, "the download notes", out, "g="+wrongGuess, "g="+password)
	guessesAlike(t, "the download notes' file names", out, "g-"+wrongGuess, "g-"+password)
}

// TestAFileNameTheSitesServerChoseIsNeverShownInClear: the secret's site
// answers a download with a file name that holds the value; the hostile
// page, in a background tab, downloads it. The note names the file masked
// or withheld, never in clear: a download's server chose its name too.
func TestAFileNameTheSitesServerChoseIsNeverShownInClear(t *testing.T) {
	t.Parallel()
	const password = "Dl-Name-Srv-5582"
	manifest := networkLogsManifest + fmt.Sprintf(`
[browser.commands.download]
[browser.files]
download_dir = %q
`, t.TempDir())
	d := launchHTTP(t, nil, []string{"BROWSERGATE_E2E_NETSECRET=" + password}, manifest, "")
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/creds" {
			w.Header().Set("Content-Disposition", `attachment; filename="creds-`+password+`.txt"`)
			fmt.Fprint(w, "the site's file")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Site</title><p>The site.</p>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	evil, stop2, err := serveOn("127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hostile</title><script>
setTimeout(() => { const a = document.createElement('a'); a.href = '`+site+`/creds'; document.body.append(a); a.click(); }, 1000);
</script>`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop2)
	call := allowedCaller(t, d.connect(t, "alice-token"))
	call("navigate", map[string]any{"url": evil + "/"})
	out := call("new_tab", map[string]any{"url": site + "/"})
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out, "\ndownload"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reply tells of the download:\n%s", out)
		}
		out += call("snapshot", nil)
	}
	t.Logf("the replies:\n%s", out)
	if strings.Contains(out, password) {
		t.Errorf("a download's file name shows the secret's value in clear:\n%s", out)
	}
}
