package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
	"github.com/browsergate/browsergate/toolclad"
)

// save_pdf: the current page printed to PDF (Page.printToPDF) and saved
// into the download directory as a download is (saveFileAs: a safe name,
// never over a file there, within max_download_bytes, nothing kept of a
// failure). The PDF is read from the browser as a stream, so one larger
// than max_download_bytes is refused once that many bytes have come.

// directionPDF is the files entry of a PDF save_pdf saved.
const directionPDF = "pdf"

// pdfChunk is how much of the PDF one IO.read asks for.
const pdfChunk = 1 << 20

func actSavePDF(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	files := s.manifest.Browser.Files
	if files.DownloadDir == "" {
		return output{}, errors.New("the manifest declares no [browser.files] download_dir, where save_pdf saves")
	}
	name, _ := args["filename"].(string)
	if name == "" {
		name = cmp.Or(strings.TrimSpace(f.State.Title), "page")
	}
	if !strings.EqualFold(filepath.Ext(name), ".pdf") {
		name += ".pdf"
	}
	landscape, _ := args["landscape"].(bool)
	res, err := chromedp.Call(ctx, page.PrintToPDF, page.PrintToPDFParams{
		Landscape: &landscape, TransferMode: page.PrintToPDFTransferModeReturnAsStream,
	})
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "not implemented") {
			return output{}, fmt.Errorf("%w: this browser does not print to PDF (Chromium prints only when it runs headless); nothing was saved", ErrNoPDF)
		}
		return output{}, fmt.Errorf("save_pdf: print the page: %w; nothing was saved", err)
	}
	stream := &pdfStream{ctx: ctx, handle: res.Stream}
	defer stream.close()
	saved, err := saveFileAs(files.DownloadDir, name, stream, cmp.Or(files.MaxDownloadBytes, toolclad.DefaultMaxDownloadBytes), browserNaming)
	saved.Direction, saved.URL = directionPDF, f.State.URL
	if err != nil {
		saved.Refused = err.Error()
		return output{Files: []evidence.FileRef{saved}}, fmt.Errorf("save_pdf: %w; nothing was saved", err)
	}
	return output{Files: []evidence.FileRef{saved}, Text: fmt.Sprintf("saved the page as %s in the download directory (%d bytes, %s, sha256 %s)",
		pagetext.Value(saved.Name), saved.Size, saved.ContentType, saved.SHA256)}, nil
}

// pdfStream reads a stream of the browser's (IO.read) as an io.Reader.
type pdfStream struct {
	ctx    context.Context
	handle cdpio.StreamHandle
	rest   []byte
	eof    bool
}

func (r *pdfStream) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		res, err := chromedp.Call(r.ctx, cdpio.Read, cdpio.ReadParams{Handle: r.handle, Size: pdfChunk})
		if err != nil {
			return 0, fmt.Errorf("read the PDF from the browser: %w", err)
		}
		r.rest, r.eof = res.Data, res.EOF
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

func (r *pdfStream) close() {
	if r.handle != "" {
		_, _ = chromedp.Call(r.ctx, cdpio.Close, cdpio.CloseParams{Handle: r.handle})
	}
}
