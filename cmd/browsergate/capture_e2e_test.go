package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	_ "image/jpeg" // decodes the JPEG screenshots
	_ "image/png"  // and the PNG ones
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/internal/testkit"
)

// captureManifest is e2eManifest's head (a launched browser) with
// 127.0.0.3 in scope too (a second site, whose frames run in processes of
// their own), the screenshot, save_pdf and execute_js of #37 with their
// opt-in arguments, and a download directory.
func captureManifest(down string, maxBytes int) string {
	return captureManifestOn("launch", "", down, maxBytes)
}

// captureManifestOn is captureManifest for a browser connected as connect
// says (live: the user's at endpoint).
func captureManifestOn(connect, endpoint, down string, maxBytes int) string {
	live := ""
	if endpoint != "" {
		live = fmt.Sprintf("live_endpoint = %q", endpoint)
	}
	head, _, _ := strings.Cut(fmt.Sprintf(e2eManifest, connect, live), "[browser.commands.")
	head = strings.NewReplacer(`["127.0.0.1"]`, `["127.0.0.1", "127.0.0.3"]`, `["127.0.0.1/32"]`, `["127.0.0.1/32", "127.0.0.3/32"]`).Replace(head)
	return head + `[browser.commands.navigate]
[browser.commands.snapshot]
[browser.commands.type_text]
[browser.commands.submit_form]
[browser.commands.screenshot]
` + surfaceArgs["screenshot"] + `[browser.commands.save_pdf]
[browser.commands.execute_js]
` + surfaceArgs["execute_js"] + fmt.Sprintf("[browser.files]\ndownload_dir = %q\nmax_download_bytes = %d\n", down, maxBytes)
}

// captureShotPage has a 200 by 100 red box, a hidden paragraph and a 50
// by 40 blue box below the fold.
const captureShotPage = `<!doctype html><title>shot</title><style>body { margin: 0 }</style>
<div id=box style="position: absolute; left: 10px; top: 20px; width: 200px; height: 100px; background: #c00"></div>
<p id=gone style="display: none">hidden</p><div style="height: 3000px"></div>
<div id=low style="margin-left: 30px; width: 50px; height: 40px; background: #00c"></div>`

// shotOf calls screenshot and returns the image of the MIME type it must
// carry.
func shotOf(t *testing.T, f *fixture, args map[string]any, mime string) []byte {
	t.Helper()
	res := f.callResult(t, "e2e.screenshot", args)
	if res.IsError {
		t.Fatalf("screenshot %v refused:\n%s", args, resultText(res))
	}
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			if img.MIMEType != mime || http.DetectContentType(img.Data) != mime {
				t.Fatalf("screenshot %v gave %s (sniffed %s), want %s", args, img.MIMEType, http.DetectContentType(img.Data), mime)
			}
			return img.Data
		}
	}
	t.Fatalf("screenshot %v gave no image:\n%s", args, resultText(res))
	return nil
}

// imageSize decodes a PNG or JPEG and returns its size and the colour at
// its centre.
func imageSize(t *testing.T, b []byte) (w, h int, r, g, bl uint32) {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode the screenshot: %v", err)
	}
	bd := img.Bounds()
	r, g, bl, _ = img.At(bd.Dx()/2, bd.Dy()/2).RGBA()
	return bd.Dx(), bd.Dy(), r >> 8, g >> 8, bl >> 8
}

// TestScreenshotOfAnElement: screenshot by selector or ref captures the
// element's box (scrolled to it when it is below the fold; in a frame of
// the tab's site or of another site's process), in PNG, JPEG
// or WebP, at a scale; a hidden element, quality for a PNG and an element
// with full_page are refused, each saying why. The evidence keeps each
// image under its hash, and the HTML report shows it with its own type.
func TestScreenshotOfAnElement(t *testing.T) {
	t.Parallel()
	f := startWith(t, captureManifest(t.TempDir(), 10<<20))
	const greenButton = `<!doctype html><style>body { margin: 0 }</style><button style="margin: 7px; width: 60px; height: 30px; background: #0c0; border: 0">%s</button>`
	other, _ := serveLoggedOn(t, "127.0.0.3:0", map[string]string{"/button": fmt.Sprintf(greenButton, "Other site")})
	site, _ := serveLogged(t, map[string]string{"/shot": captureShotPage, "/button": fmt.Sprintf(greenButton, "Same site"),
		"/frames": `<!doctype html><title>frames</title><style>body { margin: 0 } iframe { border: 0; margin: 5px; width: 200px; height: 100px }</style>
<iframe src="/button"></iframe><iframe src="` + other + `/button"></iframe>`})

	// An element in a frame, of the tab's process or another site's.
	green := func(r, g, b uint32) bool { return g > 150 && r < 60 && b < 60 }
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/frames"})
	snap := f.mustAllow(t, "e2e.snapshot", nil)
	for _, label := range []string{"Same site", "Other site"} {
		ref := findRef(snap, label)
		if ref == "" {
			t.Fatalf("the snapshot has no ref for %q:\n%s", label, snap)
		}
		if w, h, r, g, b := imageSize(t, shotOf(t, f, map[string]any{"ref": ref}, "image/png")); w != 60 || h != 30 || !green(r, g, b) {
			t.Errorf("the PNG of the %s frame's button is %dx%d, centre rgb(%d,%d,%d); want 60x30, green", label, w, h, r, g, b)
		}
	}

	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/shot"})

	red := func(r, g, b uint32) bool { return r > 180 && g < 60 && b < 60 }
	blue := func(r, g, b uint32) bool { return b > 180 && r < 60 && g < 60 }
	pngShot := shotOf(t, f, map[string]any{"selector": "#box"}, "image/png")
	if w, h, r, g, b := imageSize(t, pngShot); w != 200 || h != 100 || !red(r, g, b) {
		t.Errorf("the PNG of #box is %dx%d, centre rgb(%d,%d,%d); want 200x100, red", w, h, r, g, b)
	}
	jpeg := shotOf(t, f, map[string]any{"selector": "#box", "format": "jpeg", "quality": 60, "scale": 50}, "image/jpeg")
	if w, h, r, g, b := imageSize(t, jpeg); w != 100 || h != 50 || !red(r, g, b) {
		t.Errorf("the JPEG of #box at scale 50 is %dx%d, centre rgb(%d,%d,%d); want 100x50, red", w, h, r, g, b)
	}
	low := shotOf(t, f, map[string]any{"selector": "#low"}, "image/png")
	if w, h, r, g, b := imageSize(t, low); w != 50 || h != 40 || !blue(r, g, b) {
		t.Errorf("the PNG of #low (below the fold) is %dx%d, centre rgb(%d,%d,%d); want 50x40, blue", w, h, r, g, b)
	}
	webp := shotOf(t, f, map[string]any{"format": "webp", "quality": 80}, "image/webp")
	if len(webp) < 12 || string(webp[:4]) != "RIFF" || string(webp[8:12]) != "WEBP" {
		t.Errorf("the WebP screenshot does not start as a WebP file: % x", webp[:min(len(webp), 12)])
	}
	viewport := shotOf(t, f, map[string]any{"scale": 10}, "image/png")
	if w, h, _, _, _ := imageSize(t, viewport); w < 10 || w > 400 || h < 10 || h > 400 {
		t.Errorf("the viewport at scale 10 is %dx%d; want a tenth of the viewport", w, h)
	}

	f.mustRefuse(t, "e2e.screenshot", map[string]any{"selector": "#gone"}, "has no box on the page (it is not rendered), so it cannot be captured")
	f.mustRefuse(t, "e2e.screenshot", map[string]any{"selector": "#box", "quality": 50}, "applies to jpeg and webp only")
	f.mustRefuse(t, "e2e.screenshot", map[string]any{"selector": "#box", "full_page": true}, "not both")
	f.mustRefuse(t, "e2e.screenshot", map[string]any{"scale": 300}, "scale")
	f.mustRefuse(t, "e2e.screenshot", map[string]any{"format": "gif"}, "format")

	f.cs.Close()
	shots := map[string]bool{}
	for _, e := range readEnvelopes(t, f.evidence) {
		if e.ScreenshotSHA256 != "" {
			shots[e.ScreenshotSHA256] = true
		}
	}
	for name, img := range map[string][]byte{"png": pngShot, "jpeg": jpeg, "webp": webp} {
		if sum := sha256.Sum256(img); !shots[hex.EncodeToString(sum[:])] {
			t.Errorf("no record has the %s screenshot's hash", name)
		}
	}
	report, code := runBinary(t, "evidence", "export", "--evidence", f.evidence, "--format", "html")
	for _, typ := range []string{"image/png", "image/jpeg", "image/webp"} {
		if code != 0 || !strings.Contains(report, "data:"+typ+";base64,") {
			t.Errorf("the HTML report (exit %d) does not show a screenshot of type %s", code, typ)
		}
	}
}

// TestSavePDF: save_pdf prints the page into the download directory as a
// download is saved: under the page's title or the name asked for, made
// safe (no path leaves the directory), never over a file already there,
// and refused whole (nothing left) past max_download_bytes. The reply and
// the evidence's files entry (direction "pdf") give name, size and the
// SHA-256 of the file as saved.
func TestSavePDF(t *testing.T) {
	t.Parallel()
	down := t.TempDir()
	f := startWith(t, captureManifest(down, 200000))
	site, _ := serveLogged(t, map[string]string{
		"/report": `<!doctype html><title>Quarterly report</title><h1>Quarterly report</h1><p>North: 42</p>`,
		"/long":   `<!doctype html><title>long</title>` + strings.Repeat(`<p>`+strings.Repeat("A long line of text to print. ", 30)+`</p>`, 3000),
	})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/report"})
	out := f.mustAllow(t, "e2e.save_pdf", nil)
	if !strings.Contains(out, "saved the page as Quarterly report.pdf in the download directory") || !strings.Contains(out, "application/pdf") {
		t.Errorf("save_pdf:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.save_pdf", map[string]any{"filename": "../../etc/passwd", "landscape": true})
	if !strings.Contains(out, "saved the page as passwd.pdf") {
		t.Errorf("save_pdf with a path as the name:\n%s", out)
	}
	out = f.mustAllow(t, "e2e.save_pdf", map[string]any{"filename": "Quarterly report.pdf"})
	if !strings.Contains(out, "saved the page as Quarterly report (2).pdf") {
		t.Errorf("save_pdf over a file already there:\n%s", out)
	}
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/long"})
	f.mustRefuse(t, "e2e.save_pdf", map[string]any{"filename": "long.pdf"}, "larger than max_download_bytes (200000 bytes); nothing was saved")

	entries, err := os.ReadDir(down)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, "|") != "Quarterly report (2).pdf|Quarterly report.pdf|passwd.pdf" {
		t.Errorf("the download directory holds %q, want the three PDFs and nothing partial", names)
	}
	f.cs.Close()
	saved := 0
	for _, e := range readEnvelopes(t, f.evidence) {
		for _, fr := range e.Files {
			if e.Command != "save_pdf" || fr.Direction != "pdf" {
				t.Errorf("%s's evidence file = %+v, want direction pdf from save_pdf", e.Command, fr)
				continue
			}
			if fr.Refused != "" {
				continue
			}
			saved++
			b, err := os.ReadFile(filepath.Join(down, fr.Name))
			if sum := sha256.Sum256(b); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || hex.EncodeToString(sum[:]) != fr.SHA256 ||
				int64(len(b)) != fr.Size || fr.URL != site+"/report" || fr.ContentType != "application/pdf" {
				t.Errorf("evidence of %s = %+v, does not match the file (%d bytes, %v)", fr.Name, fr, len(b), err)
			}
		}
	}
	if saved != 3 {
		t.Errorf("the evidence records %d saved PDFs, want 3", saved)
	}
}

// TestSavePDFInAHeadfulUsersBrowser: a user's Chromium that is not
// headless (the full browser, drawing to no screen: --ozone-platform
// headless, as no display is at hand) prints to PDF as a headless one does,
// so save_pdf works in live mode there too. (Chromium before 2023 answered
// "PrintToPDF is not implemented" when headful; save_pdf then refuses,
// saying so: ErrNoPDF.)
func TestSavePDFInAHeadfulUsersBrowser(t *testing.T) {
	t.Parallel()
	flags := slices.DeleteFunc(testkit.ChromiumFlags(), func(f string) bool { return f == "--headless" })
	port, _ := testkit.StartChromium(t, append(flags, "--ozone-platform=headless")...)
	down := t.TempDir()
	f := startWith(t, captureManifestOn("live", fmt.Sprintf("http://127.0.0.1:%d", port), down, 10<<20))
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/version", port))
	if err != nil {
		t.Fatal(err)
	}
	version, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(version), "Chrome/") || strings.Contains(string(version), "Headless") {
		t.Fatalf("the user's browser is not a headful Chrome:\n%s", version)
	}
	site, _ := serveLogged(t, map[string]string{"/report": `<!doctype html><title>Headful report</title><h1>Report</h1>`})
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/report"})
	if out := f.mustAllow(t, "e2e.save_pdf", nil); !strings.Contains(out, "saved the page as Headful report.pdf") {
		t.Errorf("save_pdf on the headful browser:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(down, "Headful report.pdf")); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("the headful browser's PDF: %v", err)
	}
}
