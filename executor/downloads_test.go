package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/scope"
)

func TestSanitizeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":                         "report.pdf",
		"../../etc/passwd":                   "passwd",
		`..\..\windows\evil.exe`:             "evil.exe",
		".bashrc":                            "bashrc",
		"...":                                "download",
		"":                                   "download",
		"a/b/":                               "download",
		"semi;colon|pipe$.sh":                "semi_colon_pipe_.sh",
		"trailing dots. . .":                 "trailing dots",
		"résumé 2026 (final).docx":           "résumé 2026 (final).docx",
		"nul\x00byte.txt":                    "nul_byte.txt",
		"new\nline.txt":                      "new_line.txt",
		strings.Repeat("a", 300) + ".tar.gz": strings.Repeat("a", maxFileNameBytes-3) + ".gz",
		strings.Repeat("é", 100):             strings.Repeat("é", maxFileNameBytes/2),
	} {
		if got := sanitizeFileName(in); got != want {
			t.Errorf("sanitizeFileName(%q) = %q, want %q", in, got, want)
		}
		if got := sanitizeFileName(in); len(got) > maxFileNameBytes || strings.HasPrefix(got, ".") || strings.ContainsAny(got, "/\\\x00") {
			t.Errorf("sanitizeFileName(%q) = %q is not a safe name", in, got)
		}
	}
}

// saveFile never replaces a file, leaves nothing behind when the bytes are
// too many or the source fails, and names the copies "name (n).ext".
func TestSaveFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink planted under the next name is not followed or replaced.
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(outside, filepath.Join(dir, "a (2).txt")); err != nil {
		t.Fatal(err)
	}
	ref, err := saveFile(dir, "../a.txt", strings.NewReader("new bytes"), 100)
	if err != nil || ref.Name != "a (3).txt" || ref.Size != 9 || ref.ContentType != "text/plain; charset=utf-8" || len(ref.SHA256) != 64 {
		t.Fatalf("saveFile = %+v, %v", ref, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "mine" {
		t.Errorf("a.txt was replaced: %q", b)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink was followed: %v", err)
	}
	if _, err := saveFile(dir, "big.bin", strings.NewReader(strings.Repeat("x", 101)), 100); err == nil || !strings.Contains(err.Error(), "larger than max_download_bytes") {
		t.Errorf("an oversized file: %v", err)
	}
	if _, err := saveFile(dir, "broken.bin", io.MultiReader(strings.NewReader("part"), iotest.ErrReader(errors.New("connection reset"))), 100); err == nil {
		t.Error("a failing source was saved")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "a (2).txt,a (3).txt,a.txt" {
		t.Errorf("the directory holds %q: something partial was left, or a name replaced", names)
	}
}

// TestOwnedByAnother: in a user's browser, a download of a frame another
// session's guard knows is that session's, never taken for the user's own
// (which would be copied into the user's Downloads).
func TestOwnedByAnother(t *testing.T) {
	const endpoint = "ws://127.0.0.1:1/test-owned-by-another"
	a := &targetGuard{wsURL: endpoint, frames: map[string]string{"A1": ""}}
	b := &targetGuard{wsURL: endpoint, frames: map[string]string{"B1": ""}}
	elsewhere := &targetGuard{wsURL: endpoint + "/other", frames: map[string]string{"C1": ""}}
	liveGuards.mu.Lock()
	liveGuards.by[endpoint] = []*targetGuard{a, b}
	liveGuards.by[endpoint+"/other"] = []*targetGuard{elsewhere}
	liveGuards.mu.Unlock()
	t.Cleanup(func() {
		liveGuards.mu.Lock()
		delete(liveGuards.by, endpoint)
		delete(liveGuards.by, endpoint+"/other")
		liveGuards.mu.Unlock()
	})
	for _, c := range []struct {
		g     *targetGuard
		frame string
		want  bool
	}{
		{a, "B1", true},  // b's frame
		{a, "A1", false}, // a's own: not another's
		{a, "U1", false}, // nobody's: the user's
		{a, "C1", false}, // a guard of another browser
		{b, "A1", true},
	} {
		if got := c.g.ownedByAnother(c.frame); got != c.want {
			t.Errorf("ownedByAnother(%s) = %v, want %v", c.frame, got, c.want)
		}
	}
}

// TestStrictFileName: download_file's names are GAIA's: the last path
// element, only [A-Za-z0-9._-], no leading dot, at most 200 characters
// with the extension kept.
func TestStrictFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":                      "report.pdf",
		"../../.bashrc\a evil name;rm.sh": "bashrc__evil_name_rm.sh",
		`..\..\windows\system32.dll`:      "system32.dll",
		"résumé (final).docx":             "r_sum___final_.docx",
		"...":                             "download",
		"":                                "download",
		strings.Repeat("a", 300) + ".tar": strings.Repeat("a", 196) + ".tar",
	} {
		got := strictFileName(in)
		if got != want {
			t.Errorf("strictFileName(%q) = %q, want %q", in, got, want)
		}
		if len(got) > maxStrictName || strings.HasPrefix(got, ".") || strings.Trim(got, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
			t.Errorf("strictFileName(%q) = %q is not a strict name", in, got)
		}
	}
}

// TestOnlyActionsAwaitADownload: after an action, a document request that
// committed no document, or a click on a download link, may be a download
// the browser has yet to report, and the reply waits for it to begin and
// for the downloads begun meanwhile to end. A command that does not
// change the page started none and waits for neither: a redirect of the
// page's own still in flight when a snapshot ended held that snapshot
// back a second (downloadStartWait) before, in a measured flow.
func TestOnlyActionsAwaitADownload(t *testing.T) {
	spec := func(name string) commandSpec {
		t.Helper()
		s, ok := commandTable[name]
		if !ok {
			t.Fatalf("no command %s", name)
		}
		return s
	}
	for _, c := range []struct {
		command         string
		held, link      bool
		newDocs, newNav int
		begin, end      bool
	}{
		{"click", false, false, 1, 0, true, true},    // a request that committed nothing
		{"click", false, false, 1, 1, false, true},   // it committed a document
		{"click", false, false, 0, 0, false, true},   // no request
		{"click", false, true, 0, 0, true, true},     // a download link
		{"click", true, true, 1, 0, false, false},    // a dialog holds the page
		{"navigate", false, false, 1, 0, true, true}, // a URL that downloads
		{"snapshot", false, false, 1, 0, false, false},
		{"snapshot", false, true, 1, 0, false, false},
	} {
		begin, end := downloadWaits(spec(c.command), c.held, c.link, c.newDocs, c.newNav)
		if begin != c.begin || end != c.end {
			t.Errorf("%s (held %v, download link %v, %d new document requests, %d new documents): waits for a download to begin %v and to end %v, want %v and %v",
				c.command, c.held, c.link, c.newDocs, c.newNav, begin, end, c.begin, c.end)
		}
	}
	for _, name := range []string{"snapshot", "read", "extract_html", "screenshot", "wait_for", "list_tabs", "close_tab", "console_messages", "network_log", "network_requests", "network_request", "find", "network_timing", "download"} {
		if spec(name).changesPage() {
			t.Errorf("%s counts as changing the page: act would wait after it for downloads the page starts on its own", name)
		}
	}
	for _, name := range []string{"click", "submit_form", "press_key", "navigate", "select_option", "go_back", "reload"} {
		if !spec(name).changesPage() {
			t.Errorf("%s counts as not changing the page: a download it starts would not be waited for", name)
		}
	}
}

// TestSessionEndWaitsForASaveUnderWay: a download the browser completed
// is being saved as the session ends. stop waits for the save, so that
// the end record (what take returns then) names the saved file; a save
// that has not ended by stop's deadline is recorded as refused, and it
// leaves nothing in the download directory when it ends later. The staged file is a FIFO: its save blocks
// until the test writes the bytes.
func TestSessionEndWaitsForASaveUnderWay(t *testing.T) {
	staged := func(t *testing.T) (*downloads, string, func(string)) {
		staging, dir := t.TempDir(), t.TempDir()
		const guid = "0a1b2c3d-0000-4000-8000-00000000beef"
		if err := syscall.Mkfifo(filepath.Join(staging, guid), 0o600); err != nil {
			t.Skip("no FIFO here:", err)
		}
		d := newDownloads(true, dir, 1<<20, staging, func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
		d.cancel = func(string) {}
		d.gate = func(context.Context, *download, func(string)) downloadAnswer { return &turn{} } // allowed
		d.begin(nil, guid, "http://127.0.0.1/report.txt", "report.txt", "http://127.0.0.1/", []string{"127.0.0.1"})
		d.progress(guid, "completed", 5, 5) // the save starts
		// Opening the FIFO waits for the save to open it; the save then
		// waits for the bytes.
		w, err := os.OpenFile(filepath.Join(staging, guid), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		write := func(text string) {
			w.WriteString(text)
			w.Close()
		}
		return d, dir, write
	}

	t.Run("saved before the end record", func(t *testing.T) {
		d, dir, write := staged(t)
		stopped := make(chan struct{})
		go func() { d.stop(time.Now().Add(time.Minute)); close(stopped) }()
		select {
		case <-stopped:
			t.Fatal("stop returned while the download was being saved")
		case <-time.After(200 * time.Millisecond):
		}
		write("hello")
		<-stopped
		files := d.take()
		if len(files) != 1 || files[0].file.Refused != "" || files[0].file.Name != "report.txt" || files[0].file.Size != 5 {
			t.Fatalf("the end record's downloads: %+v, want report.txt saved", files)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "report.txt")); err != nil || string(b) != "hello" {
			t.Fatalf("the saved file: %q, %v", b, err)
		}
	})

	t.Run("one that begins during the wait is cancelled", func(t *testing.T) {
		d, _, write := staged(t)
		defer write("hello")
		cancelled := make(chan string, 4)
		d.cancel = func(guid string) { cancelled <- guid }
		const late = "0a1b2c3d-0000-4000-8000-0000000000ff"
		go func() {
			time.Sleep(50 * time.Millisecond)
			d.begin(nil, late, "http://127.0.0.1/late.bin", "late.bin", "http://127.0.0.1/", []string{"127.0.0.1"})
		}()
		d.stop(time.Now().Add(300 * time.Millisecond))
		select {
		case guid := <-cancelled:
			if guid != late {
				t.Errorf("cancelled %s, want %s", guid, late)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the download begun during the wait was not cancelled")
		}
		why := map[string]string{}
		for _, f := range d.take() {
			why[f.file.Name] = f.file.Refused
		}
		if !strings.Contains(why["late.bin"], "ended before it did") || !strings.Contains(why["report.txt"], "while it was being saved") {
			t.Errorf("the end record's downloads: %v", why)
		}
	})

	t.Run("refused when the save outlasts the wait", func(t *testing.T) {
		d, dir, write := staged(t)
		d.stop(time.Now().Add(100 * time.Millisecond))
		files := d.take()
		if len(files) != 1 || !strings.Contains(files[0].file.Refused, "while it was being saved") {
			t.Fatalf("the end record's downloads: %+v, want the download refused", files)
		}
		d.mu.Lock()
		ended := d.change
		d.mu.Unlock()
		write("hello") // the save ends now, after the end record
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the late save did not end")
		}
		if late := d.take(); len(late) != 0 {
			t.Errorf("the late save was added to the downloads to record: %+v", late)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the late save left %v in the download directory", names(entries))
		}
	})
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestPageDownloadsLinkedAndFailClosed: a download that begins during a
// call is recorded after that call's record and names it; one that
// begins between calls names the last call and says so. A session
// without a gate, or a gate that fails, refuses the download, and nothing
// of it is kept.
func TestPageDownloadsLinkedAndFailClosed(t *testing.T) {
	const during, between, nogate, panics = "0a1b2c3d-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002",
		"0a1b2c3d-0000-4000-8000-000000000003", "0a1b2c3d-0000-4000-8000-000000000004"
	staging := t.TempDir()
	for _, g := range []string{during, between, nogate, panics} {
		if err := os.WriteFile(filepath.Join(staging, g), []byte("bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := newDownloads(true, t.TempDir(), 1<<20, staging, func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
	d.cancel = func(string) {}
	recorded := make(chan *download, 4)
	d.record = func(dl *download) { recorded <- dl }
	d.gate = func(context.Context, *download, func(string)) downloadAnswer {
		return &turn{deny: deny(evidence.StageCedar, "policy p", "forbidden")}
	}
	next := func() *download {
		t.Helper()
		select {
		case dl := <-recorded:
			return dl
		case <-time.After(10 * time.Second):
			t.Fatal("no record written")
			return nil
		}
	}

	// During the first call (the downloads are made during one).
	d.begin(nil, during, "http://127.0.0.1/a", "a", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.progress(during, "completed", 5, 5)
	select {
	case dl := <-recorded:
		t.Fatalf("recorded before its call was: %+v", dl)
	case <-time.After(200 * time.Millisecond):
	}
	d.endCall(7, sessionView{})
	if dl := next(); dl.callSeq != 7 || dl.between || dl.refused == nil || dl.refused.Stage != evidence.StageCedar {
		t.Errorf("the download of call 7: seq %d, between %v, refused %+v", dl.callSeq, dl.between, dl.refused)
	}

	// Between calls: linked to the last, written when it ends.
	d.begin(nil, between, "http://127.0.0.1/b", "b", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.progress(between, "completed", 5, 5)
	if dl := next(); dl.callSeq != 7 || !dl.between || dl.refused == nil {
		t.Errorf("the download between calls: seq %d, between %v, refused %+v", dl.callSeq, dl.between, dl.refused)
	}

	// No gate, and a gate that panics: refused.
	d.gate = nil
	d.begin(nil, nogate, "http://127.0.0.1/c", "c", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.progress(nogate, "completed", 5, 5)
	if dl := next(); dl.refused == nil || dl.file.Refused == "" {
		t.Errorf("the download without a gate: refused %+v, file %+v", dl.refused, dl.file)
	}
	d.gate = func(context.Context, *download, func(string)) downloadAnswer { panic("the policies are gone") }
	d.begin(nil, panics, "http://127.0.0.1/d", "d", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.progress(panics, "completed", 5, 5)
	if dl := next(); dl.refused == nil || !strings.Contains(dl.refused.Reason, "the policies are gone") {
		t.Errorf("the download whose gate failed: refused %+v", dl.refused)
	}
	if entries, _ := os.ReadDir(staging); len(entries) != 0 {
		t.Errorf("refused downloads left %v in the staging directory", names(entries))
	}
	if entries, _ := os.ReadDir(d.dir); len(entries) != 0 {
		t.Errorf("refused downloads were saved: %v", names(entries))
	}
}

// TestACancelledDownloadsLateFileIsRemoved: Chromium may create the empty
// file of a download a moment after it reported the download cancelled;
// the file does not stay in the staging directory.
func TestACancelledDownloadsLateFileIsRemoved(t *testing.T) {
	const guid = "0a1b2c3d-0000-4000-8000-000000000005"
	staging := t.TempDir()
	d := newDownloads(true, t.TempDir(), 1<<20, staging, func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
	d.cancel = func(string) {}
	d.gate = func(context.Context, *download, func(string)) downloadAnswer {
		return &turn{deny: deny(evidence.StageCedar, "policy p", "forbidden")}
	}
	d.begin(nil, guid, "http://127.0.0.1/a", "a", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.progress(guid, "canceled", 5, 0)
	if err := os.WriteFile(filepath.Join(staging, guid), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() string {
		if entries, _ := os.ReadDir(staging); len(entries) != 0 {
			return fmt.Sprintf("the cancelled download's late file stayed in the staging directory: %v", names(entries))
		}
		return ""
	})
}

// TestASessionsEndWaitsForTheCancelsOfItsDownloads: when a session ends,
// the browser has been asked to cancel each of its downloads under way
// (one waiting for the gate) by the time stop returns, before the
// session's guard and its connection go.
func TestASessionsEndWaitsForTheCancelsOfItsDownloads(t *testing.T) {
	const guid = "0a1b2c3d-0000-4000-8000-000000000006"
	d := newDownloads(true, t.TempDir(), 1<<20, t.TempDir(), func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
	var mu sync.Mutex
	var cancelled []string
	d.cancel = func(g string) {
		time.Sleep(100 * time.Millisecond) // the browser's answer
		mu.Lock()
		cancelled = append(cancelled, g)
		mu.Unlock()
	}
	d.gate = func(ctx context.Context, _ *download, _ func(string)) downloadAnswer {
		<-ctx.Done() // a human who never answers
		return nil
	}
	d.begin(nil, guid, "http://127.0.0.1/a", "a", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.stop(time.Now().Add(time.Second))
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(cancelled, guid) {
		t.Errorf("stop returned before the browser was asked to cancel the download: cancelled %q", cancelled)
	}
}

// TestDownloadsBegunWhileASessionEndsAreCancelledWithoutACrash: a page
// that keeps starting downloads while its session ends (its tabs are
// still open while the downloads stop) has each refused and its cancel
// asked of the browser; the end neither crashes nor waits for them past
// its bound, and those asked are awaited before the guard closes.
func TestDownloadsBegunWhileASessionEndsAreCancelledWithoutACrash(t *testing.T) {
	d := newDownloads(true, t.TempDir(), 1<<20, t.TempDir(), func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
	var mu sync.Mutex
	cancelled := map[string]bool{}
	d.cancel = func(g string) {
		time.Sleep(time.Millisecond)
		mu.Lock()
		cancelled[g] = true
		mu.Unlock()
	}
	d.gate = func(ctx context.Context, _ *download, _ func(string)) downloadAnswer {
		<-ctx.Done()
		return nil
	}
	stop := make(chan struct{})
	begun := make(chan []string)
	go func() {
		var guids []string
		for i := 0; ; i++ {
			select {
			case <-stop:
				begun <- guids
				return
			default:
			}
			g := fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", i)
			d.begin(nil, g, "http://127.0.0.1/a", "a", "http://127.0.0.1/", []string{"127.0.0.1"})
			guids = append(guids, g)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	d.stop(time.Now().Add(200 * time.Millisecond))
	time.Sleep(20 * time.Millisecond)
	close(stop)
	guids := <-begun
	d.awaitCancels(time.Now().Add(10 * time.Second)) // as the guard closes
	mu.Lock()
	defer mu.Unlock()
	for _, g := range guids {
		if !cancelled[g] {
			t.Fatalf("download %s of %d was not cancelled", g, len(guids))
		}
	}
}

// TestARefusedDownloadIsCancelledInTheContextItBeganIn: a session with
// two browser contexts (new_context) shares one downloads handler; a
// refused download is cancelled by the guard of the context it began
// in, not by the last context's.
func TestARefusedDownloadIsCancelledInTheContextItBeganIn(t *testing.T) {
	d := newDownloads(true, t.TempDir(), 1<<20, t.TempDir(), func(string) scope.Verdict { return scope.Verdict{Allowed: true} }, slog.New(slog.DiscardHandler))
	d.gate = func(context.Context, *download, func(string)) downloadAnswer {
		return &turn{deny: deny(evidence.StageCedar, "policy p", "forbidden")}
	}
	cancelled := make(chan string, 2)
	in := func(context string) func(string) {
		return func(guid string) { cancelled <- context + " " + guid }
	}
	const first, second = "0a1b2c3d-0000-4000-8000-000000000007", "0a1b2c3d-0000-4000-8000-000000000008"
	d.begin(in("A"), first, "http://127.0.0.1/a", "a", "http://127.0.0.1/", []string{"127.0.0.1"})
	d.begin(in("B"), second, "http://127.0.0.1/b", "b", "http://127.0.0.1/", []string{"127.0.0.1"})
	got := map[string]bool{}
	for range 2 {
		select {
		case c := <-cancelled:
			got[c] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("not every refused download was cancelled: %v", got)
		}
	}
	if !got["A "+first] || !got["B "+second] {
		t.Errorf("cancelled %v, want each in the context it began in", got)
	}
}
