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
