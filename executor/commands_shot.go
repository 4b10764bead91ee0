package executor

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// screenshot: the page's pixels, of the viewport, the whole page or one
// element, as PNG, JPEG or WebP, at a scale. The image goes to the agent
// and, unless [tool.evidence] screenshots takes one of its own with every
// record, into the evidence under its hash (its type is in its bytes).

// shotFormats are screenshot's formats: the CDP format and the MIME type.
var shotFormats = map[string]struct {
	cdp  page.CaptureScreenshotFormat
	mime string
	name string
}{
	"png":  {page.CaptureScreenshotFormatPng, "image/png", "PNG"},
	"jpeg": {page.CaptureScreenshotFormatJpeg, "image/jpeg", "JPEG"},
	"webp": {page.CaptureScreenshotFormatWebp, "image/webp", "WebP"},
}

func actScreenshot(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	full, _ := args["full_page"].(bool)
	format, _ := args["format"].(string)
	if format == "" {
		format = "png"
	}
	ff := shotFormats[format]
	p := page.CaptureScreenshotParams{Format: ff.cdp}
	if q, ok := args["quality"].(int64); ok {
		if format == "png" {
			return output{}, errors.New("argument \"quality\": it applies to jpeg and webp only; a png is lossless")
		}
		p.Quality = &q
	}
	scale := 1.0
	if n, ok := args["scale"].(int64); ok {
		scale = float64(n) / 100
	}
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	what := "screenshot"
	switch {
	case named && full:
		return output{}, errors.New("give full_page or an element (ref or selector), not both: an element's screenshot is its box")
	case named:
		clip, err := s.elementClip(ctx, el)
		if err != nil {
			return output{}, err
		}
		p.Clip, what = clip, "screenshot of "+el.label
	case full:
		p.Clip = s.pageClip(ctx)
	case scale != 1:
		m, err := chromedp.Call(ctx, page.GetLayoutMetrics, struct{}{})
		if err != nil || m.CSSVisualViewport == nil {
			return output{}, fmt.Errorf("screenshot: the browser cannot say where the viewport is: %v", err)
		}
		v := m.CSSVisualViewport
		p.Clip = &page.Viewport{X: v.PageX, Y: v.PageY, Width: v.ClientWidth, Height: v.ClientHeight}
	}
	if p.Clip != nil {
		beyond := true
		p.CaptureBeyondViewport = &beyond
		p.Clip.Scale = scale
	}
	img, err := s.captureImage(ctx, p)
	if err != nil {
		return output{}, err
	}
	return output{Text: fmt.Sprintf("%s, %d bytes %s", what, len(img), ff.name), Image: img, ImageType: ff.mime}, nil
}

// screenshot is a PNG of the viewport, or of the whole page (the
// evidence's screenshot with every record, and screenshot's default).
func (s *session) screenshot(ctx context.Context, full bool) ([]byte, error) {
	p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	if full {
		beyond := true
		p.CaptureBeyondViewport = &beyond
		p.Clip = s.pageClip(ctx)
	}
	return s.captureImage(ctx, p)
}

func (s *session) captureImage(ctx context.Context, p page.CaptureScreenshotParams) ([]byte, error) {
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return res.Data, nil
}

// pageClip is the whole page, as its content size gives it (nil: the
// browser did not say, and the viewport is captured).
func (s *session) pageClip(ctx context.Context) *page.Viewport {
	m, err := chromedp.Call(ctx, page.GetLayoutMetrics, struct{}{})
	if err != nil || m.CSSContentSize == nil {
		return nil
	}
	return &page.Viewport{Width: m.CSSContentSize.Width, Height: m.CSSContentSize.Height, Scale: 1}
}

// elementClip scrolls the element into view and returns its box in the
// page's coordinates, cut to the page's content: in an out-of-process
// frame, the box is moved by where the frame is in the tab (frameOffset,
// as a click's point is).
func (s *session) elementClip(ctx context.Context, el element) (*page.Viewport, error) {
	ox, oy, err := s.frameOffset(ctx, el)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be captured: %w", el.label, err)
	}
	_, _ = chromedp.Call(el.in(ctx), dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: el.object})
	q, err := chromedp.Call(el.in(ctx), dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: el.object})
	if err != nil || len(q.Quads) == 0 {
		return nil, fmt.Errorf("%s has no box on the page (it is not rendered), so it cannot be captured", el.label)
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, quad := range q.Quads {
		for i := 0; i+1 < len(quad); i += 2 {
			x0, x1 = min(x0, quad[i]), max(x1, quad[i])
			y0, y1 = min(y0, quad[i+1]), max(y1, quad[i+1])
		}
	}
	m, err := chromedp.Call(ctx, page.GetLayoutMetrics, struct{}{})
	if err != nil || m.CSSVisualViewport == nil {
		return nil, fmt.Errorf("%s cannot be captured: the browser cannot say where the viewport is: %v", el.label, err)
	}
	// The quads are in the viewport; the clip is in the page.
	x0, x1 = x0+ox+m.CSSVisualViewport.PageX, x1+ox+m.CSSVisualViewport.PageX
	y0, y1 = y0+oy+m.CSSVisualViewport.PageY, y1+oy+m.CSSVisualViewport.PageY
	if c := m.CSSContentSize; c != nil {
		x0, y0 = max(x0, 0), max(y0, 0)
		x1, y1 = min(x1, c.Width), min(y1, c.Height)
	}
	if x1-x0 < 1 || y1-y0 < 1 {
		return nil, fmt.Errorf("%s has an empty box on the page (%.0f by %.0f pixels), so it cannot be captured", el.label, max(x1-x0, 0), max(y1-y0, 0))
	}
	return &page.Viewport{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}, nil
}
