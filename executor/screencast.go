package executor

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
)

// The screencast of a call ([tool.evidence] recording = "screencast"):
// while a call acts, the tab's compositor sends the frames it paints
// (Page.startScreencast, JPEG), and the record of the call names them in
// order (evidence revision 17). It is the operator's choice in the
// manifest; no command turns it on or off. Frames are pixels: what the
// page shows in clear is in them, as in screenshots (a password field
// shows dots).
//
// Bounds, so that a page that repaints without end cannot fill the log or
// slow the call: a frame is kept at most every castInterval; a call keeps
// at most castCallFrames frames and castCallBytes bytes, a session
// castSessionFrames and castSessionBytes; frames beyond are acknowledged
// (the browser goes on), counted in the record's recording_dropped, and
// not kept. The last frame of a call is the viewport as the call ended,
// taken then (the compositor's frames lag the page), so every recorded call
// shows where it left its page.
const (
	castInterval      = 100 * time.Millisecond
	castCallFrames    = 50
	castCallBytes     = 4 << 20
	castSessionFrames = 3000
	castSessionBytes  = 256 << 20
	castQuality       = 60
	castMaxSide       = 1280
	// castStopWait bounds the browser's answer to stopping the screencast,
	// and the final frame when the tab painted none.
	castStopWait = 3 * time.Second
)

// screencast gathers the frames of one call on one tab. frame runs on
// chromedp's read loop (pageWatch.listen): it only keeps and queues the
// acknowledgement, which ack sends from a goroutine of its own.
type screencast struct {
	ctx context.Context // the tab's
	// detach takes the screencast off the tab's listener (pageWatch.cast),
	// which gives frame the frames.
	detach func()
	mu     sync.Mutex
	refs   []evidence.RecordingRef
	size   int
	// room is what the session's bounds leave this call.
	roomFrames, roomBytes int
	last                  time.Time
	dropped               int
	acks                  chan int64
	acked                 chan struct{}
}

// frame keeps a frame the tab painted, within the bounds, and queues its
// acknowledgement (the browser sends no more until it is acknowledged).
func (c *screencast) frame(e *page.EventScreencastFrame) {
	c.mu.Lock()
	now := time.Now()
	switch {
	case c.acks == nil: // stopped
	case len(e.Data) == 0:
	case !c.last.IsZero() && now.Sub(c.last) < castInterval,
		len(c.refs) >= min(castCallFrames, c.roomFrames),
		c.size+len(e.Data) > min(castCallBytes, c.roomBytes):
		c.dropped++
	default:
		c.last = now
		c.size += len(e.Data)
		c.refs = append(c.refs, evidence.RecordingRef{Kind: evidence.RecordingFrame, Data: e.Data})
	}
	if c.acks != nil {
		select {
		case c.acks <- e.SessionID:
		default: // the acknowledger is behind: the browser waits for it
		}
	}
	c.mu.Unlock()
}

// ack acknowledges the frames as they come, until stop.
func (c *screencast) ack() {
	defer close(c.acked)
	for id := range c.acks {
		ctx, cancel := context.WithTimeout(c.ctx, castStopWait)
		_, _ = chromedp.Call(ctx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: id})
		cancel()
	}
}

// stop ends the gathering: no frame is kept after it, and the
// acknowledger has ended when it returns.
func (c *screencast) stop() {
	if c.detach != nil {
		c.detach()
	}
	c.mu.Lock()
	acks := c.acks
	c.acks = nil
	c.mu.Unlock()
	if acks != nil {
		close(acks)
		<-c.acked
	}
}

// castTally is what a session's screencasts have kept, for its bounds.
type castTally struct{ frames, bytes int }
