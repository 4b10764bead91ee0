package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// startRecording starts the screencast of the call on the session's tab
// when the manifest asks for one; nil when it does not, or when there is
// no tab. An error (the backend refused the screencast) is the record's.
func (s *session) startRecording() (*screencast, error) {
	if s.manifest.Tool.Evidence.Recording != toolclad.RecordingScreencast || !s.tab.open() {
		return nil, nil
	}
	c := &screencast{ctx: s.tab.ctx, acks: make(chan int64, 8), acked: make(chan struct{}),
		roomFrames: castSessionFrames - s.cast.frames, roomBytes: castSessionBytes - s.cast.bytes}
	w := s.tab.watch
	c.detach = func() { w.cast.CompareAndSwap(c, nil) }
	w.cast.Store(c)
	go c.ack()
	quality := int64(castQuality)
	ctx, cancel := context.WithTimeout(s.tab.ctx, castStopWait)
	defer cancel()
	_, err := chromedp.Call(ctx, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg,
		Quality: &quality, MaxWidth: castMaxSide, MaxHeight: castMaxSide, EveryNthFrame: 1})
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("start the screencast: %w", err)
	}
	return c, nil
}

// stopRecording stops the screencast and returns its frames in order (one
// of the viewport when the tab painted none), and how many the bounds
// left out. The session's bounds count them.
func (s *session) stopRecording(c *screencast) ([]evidence.RecordingRef, int, error) {
	if c == nil {
		return nil, 0, nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, castStopWait)
	defer cancel()
	var errs []error
	if _, err := chromedp.Call(ctx, page.StopScreencast, cdp.Empty{}); err != nil && attached(c.ctx) {
		errs = append(errs, fmt.Errorf("stop the screencast: %w", err))
	}
	c.stop()
	refs, dropped := c.refs, c.dropped
	// The compositor's frames lag the page (the last one sent may predate
	// the call's last paint): the call's last frame is the viewport as it
	// ended, taken now, of the tab the session is in then (new_tab and
	// switch_tab end in another than they began in).
	if s.tab.open() {
		sctx, cancel := context.WithTimeout(s.tab.ctx, castStopWait)
		defer cancel()
		quality := int64(castQuality)
		shot, err := chromedp.Call(sctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: &quality})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("the call's last frame: %w", err))
		case len(refs) >= c.roomFrames || c.size+len(shot.Data) > c.roomBytes:
			dropped++
		case len(shot.Data) > 0:
			refs = append(refs, evidence.RecordingRef{Kind: evidence.RecordingFrame, Data: shot.Data})
		}
	}
	for _, r := range refs {
		s.cast.frames++
		s.cast.bytes += len(r.Data)
	}
	return refs, dropped, errors.Join(errs...)
}
