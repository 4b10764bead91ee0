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

	"github.com/browsergate/browsergate/examples/testkit"
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
	var mu sync.Mutex
	received := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>upload</title><form action="/upload" method=post enctype="multipart/form-data">
<input type=file id=f name=doc aria-label=Document><input id=t aria-label=Name><button>Send</button></form>`)
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		file, hdr, err := r.FormFile("doc")
		if err == nil {
			b, _ := io.ReadAll(file)
			mu.Lock()
			received[hdr.Filename] = string(b)
			mu.Unlock()
		}
		fmt.Fprint(w, "<title>sent</title>sent")
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
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

	h := f.callAsync(t, "e2e.upload_file", map[string]any{"selector": "#f", "file": "report.txt"})
	id := f.pendingID(t, h)
	if out, err := f.approvals(t, "approve", id, "--by", "alice"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	sum := sha256.Sum256([]byte(content))
	out, refused := h.wait(t)
	if refused || !strings.Contains(out, fmt.Sprintf("attached report.txt (%d bytes, sha256 %s)", len(content), hex.EncodeToString(sum[:]))) {
		t.Fatalf("upload_file:\n%s", out)
	}
	f.mustAllow(t, "e2e.click", map[string]any{"selector": "button"})
	mu.Lock()
	got := received["report.txt"]
	mu.Unlock()
	if got != content {
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
