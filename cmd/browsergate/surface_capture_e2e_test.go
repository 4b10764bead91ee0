package main

import (
	"bytes"
	"fmt"
	"image"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The command-surface suite's steps for screenshots, PDFs and scripts on
// an element or in a frame (#37): what they need of a browser elsewhere
// is what they need of a local one.

// surfaceCapturePages serves /capture/page, with a 200 by 100 box, a
// button and a frame of the same site, and /capture/frame.
func surfaceCapturePages(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/capture/page":
		fmt.Fprint(w, `<!doctype html><title>Capture</title><style>body { margin: 0 }</style>
<div id=box style="margin: 20px; width: 200px; height: 100px; background: #c00"></div>
<button id=go>Capture button</button>
<iframe id=inner src="/capture/frame"></iframe>
<script>window.pageVar = 'capture page'</script>`)
	case "/capture/frame":
		fmt.Fprint(w, `<!doctype html><title>Inner frame</title><p>in the frame</p><script>window.frameVar = 'capture frame'</script>`)
	default:
		http.NotFound(w, r)
	}
}

// runCapture: screenshot of one element in JPEG at half scale and in
// WebP, save_pdf into the download directory, execute_js on an element
// and in a frame (each approved by the operator).
func (s *surface) runCapture(t *testing.T) {
	s.allow(t, "navigate", map[string]any{"url": s.site + "/capture/page"}, `title="Capture"`)
	snap := s.allow(t, "snapshot", nil, "Capture button")
	button := findRef(snap, "Capture button")

	s.covered["screenshot"] = true
	res := s.f.callResult(t, s.tool+".screenshot", map[string]any{"selector": "#box", "format": "jpeg", "quality": 70, "scale": 50})
	if img := imageOf(res, "image/jpeg"); img == nil {
		t.Errorf("screenshot of #box gave no JPEG:\n%s", resultText(res))
	} else if c, _, err := image.DecodeConfig(bytes.NewReader(img)); err != nil || c.Width != 100 || c.Height != 50 {
		t.Errorf("the JPEG of the 200x100 #box at scale 50 is %dx%d (%v), want 100x50", c.Width, c.Height, err)
	}
	res = s.f.callResult(t, s.tool+".screenshot", map[string]any{"ref": button, "format": "webp"})
	if imageOf(res, "image/webp") == nil {
		t.Errorf("screenshot of the button gave no WebP:\n%s", resultText(res))
	}

	s.allow(t, "save_pdf", map[string]any{"filename": "capture"}, "saved the page as capture.pdf in the download directory", "application/pdf")
	if b, err := os.ReadFile(filepath.Join(s.down, "capture.pdf")); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("the download directory's capture.pdf is no PDF: %v", err)
	}

	if out := s.approved(t, "execute_js", map[string]any{"ref": button, "expression": "(el) => el.textContent + ' / ' + window.pageVar"}, ""); !strings.Contains(out, "Capture button / capture page") {
		t.Errorf("execute_js on the button:\n%s", out)
	}
	if out := s.approved(t, "execute_js", map[string]any{"frame": "#inner", "expression": "document.title + ' / ' + window.frameVar"}, ""); !strings.Contains(out, "Inner frame / capture frame") {
		t.Errorf("execute_js in the frame:\n%s", out)
	}
}

// imageOf is the image of the MIME type a result carries (nil: none).
func imageOf(res *mcp.CallToolResult, mime string) []byte {
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && img.MIMEType == mime && len(img.Data) > 0 && http.DetectContentType(img.Data) == mime {
			return img.Data
		}
	}
	return nil
}
