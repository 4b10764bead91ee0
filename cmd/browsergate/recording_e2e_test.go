package main

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// paintPage is a page filled with red whose button turns it green: the
// screencast of the click must end on green, of the navigation on red.
const paintPage = `<!doctype html><title>paint</title>
<style>html,body{margin:0;height:100%%}#box{position:fixed;inset:0;background:#d00}button{position:fixed;top:8px;left:8px}</style>
<div id=box></div><button onclick="document.getElementById('box').style.background='#0b0'">Paint green</button>`

// TestScreencastIsKeptWithEachCallsRecord records a session with
// [tool.evidence] recording = "screencast": every call's record names its
// frames (JPEG, in order) in the recordings bucket, the frames show the
// call's page (the click's last frame is the green it painted, the
// navigation's the red it loaded), the report shows them in order, and
// verify fails when a frame is altered or deleted.
// In the user's browser (a live session) too.
func TestScreencastIsKeptWithEachCallsRecord(t *testing.T) {
	t.Parallel()
	site, stop, err := serveOn("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, paintPage)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	t.Run("launched", func(t *testing.T) {
		t.Parallel()
		screencastSession(t, site, fmt.Sprintf(e2eManifest, "launch", ""))
	})
	t.Run("the user's browser", func(t *testing.T) {
		t.Parallel()
		port, _ := startChromium(t)
		screencastSession(t, site, fmt.Sprintf(e2eManifest, "live", fmt.Sprintf("live_endpoint = %q", fmt.Sprintf("http://127.0.0.1:%d", port))))
	})
}

// screencastSession records a session on the paint page under manifest
// with recording = "screencast" and checks its log (above).
func screencastSession(t *testing.T, site, manifest string) {
	t.Helper()
	f := startWith(t, manifest+"\n[tool.evidence]\nrecording = \"screencast\"\n")
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	button := findRef(snap, `button "Paint green"`)
	if button == "" {
		t.Fatalf("no ref for the button:\n%s", snap)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"ref": button})
	f.mustRefuse(t, "e2e.navigate", map[string]any{"url": f.canaryTo + "/"}, "DENIED at scope")
	f.cs.Close()

	_, recs := logContents(t, f.evidence)
	var records []*evidence.Envelope
	for _, rs := range recs {
		records = rs
	}
	if len(records) != 4 {
		t.Fatalf("%d records, want 4", len(records))
	}
	s, err := evidence.Open(f.evidence, &evidence.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	center := func(ref evidence.RecordingRef) (r, g, b uint32) {
		data, err := s.Recording(ref.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("frame %s is not a JPEG: %v", ref.SHA256, err)
		}
		b0 := img.Bounds()
		r, g, b, _ = img.At((b0.Min.X+b0.Max.X)/2, (b0.Min.Y+b0.Max.Y)/2).RGBA()
		return r >> 8, g >> 8, b >> 8
	}
	for _, rec := range records[:3] {
		t.Logf("record %d (%s): %d frame(s), %d dropped", rec.Seq, rec.Command, len(rec.Recording), rec.RecordingDropped)
		if len(rec.Recording) == 0 || rec.Recording[0].Kind != evidence.RecordingFrame {
			t.Fatalf("record %d (%s) has no frame: %+v (error %q)", rec.Seq, rec.Command, rec.Recording, rec.Error)
		}
	}
	last := func(rec *evidence.Envelope) evidence.RecordingRef { return rec.Recording[len(rec.Recording)-1] }
	if r, g, _ := center(last(records[0])); r < 150 || g > 80 {
		t.Errorf("the navigation's last frame is rgb(%d,%d,…) at its centre, want the page's red", r, g)
	}
	if r, g, _ := center(last(records[2])); g < 120 || r > 80 {
		t.Errorf("the click's last frame is rgb(%d,%d,…) at its centre, want the green it painted", r, g)
	}
	if len(records[3].Recording) != 0 {
		t.Errorf("the refused navigation, which never acted, has a recording: %+v", records[3].Recording)
	}
	_ = s.Close()

	out, code := runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if code != 0 {
		t.Fatalf("verify of the recorded log: exit %d\n%s", code, out)
	}
	report := filepath.Join(t.TempDir(), "report.html")
	if out, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html", "--out", report); code != 0 {
		t.Fatalf("export html: exit %d\n%s", code, out)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	prev := -1
	for _, ref := range records[2].Recording {
		i := bytes.Index(html, []byte(`title="`+ref.SHA256+`"`))
		if i < 0 || i < prev {
			t.Fatalf("frame %s of the click at %d in the report (the one before at %d): want every frame, in order", ref.SHA256, i, prev)
		}
		prev = i
	}

	frame := last(records[2]).SHA256
	editRecordings(t, f.evidence, func(b *bolt.Bucket) error { return b.Put([]byte(frame), []byte("\xff\xd8\xff another frame")) })
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if code != 1 || !strings.Contains(out, "recording "+frame+" bytes do not match their hash") {
		t.Errorf("verify after a frame was altered: exit %d, want 1 naming the frame\n%s", code, out)
	}
	editRecordings(t, f.evidence, func(b *bolt.Bucket) error { return b.Delete([]byte(frame)) })
	out, code = runBinary(t, "evidence", "verify", "--evidence", f.evidence)
	if code != 1 || !strings.Contains(out, "recording "+frame+" missing") {
		t.Errorf("verify after a frame was deleted: exit %d, want 1 naming the frame\n%s", code, out)
	}
}

// editRecordings edits the recordings bucket of a closed evidence file,
// as someone with write access to it would.
func editRecordings(t *testing.T, path string, edit func(b *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return edit(tx.Bucket([]byte("recordings"))) }); err != nil {
		t.Fatal(err)
	}
}
