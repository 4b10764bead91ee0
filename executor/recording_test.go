package executor

import (
	"testing"

	"github.com/chromedp/cdproto/page"
)

// TestScreencastKeepsWithinItsBounds: frames come faster than castInterval
// and beyond a call's bounds; the screencast keeps one per interval, at
// most castCallFrames and within the session's room, counts the rest, and
// still queues every frame's acknowledgement (the browser would otherwise
// stop sending).
func TestScreencastKeepsWithinItsBounds(t *testing.T) {
	tests := []struct {
		name                  string
		roomFrames, roomBytes int
		frames, size          int
		spaced                bool // as if castInterval passed between frames
		wantKept              int
	}{
		{"a burst keeps its first frame", castSessionFrames, castSessionBytes, 20, 100, false, 1},
		{"spaced frames stop at the call's bound", castSessionFrames, castSessionBytes, castCallFrames + 7, 100, true, castCallFrames},
		{"spaced frames stop at the call's bytes", castSessionFrames, castSessionBytes, 10, castCallBytes / 4, true, 4},
		{"the session's room is less than the call's", 3, castSessionBytes, 10, 100, true, 3},
		{"a session with no room keeps nothing", 0, 0, 5, 100, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &screencast{acks: make(chan int64, tt.frames), roomFrames: tt.roomFrames, roomBytes: tt.roomBytes}
			for i := range tt.frames {
				if tt.spaced {
					c.last = c.last.Add(-castInterval)
				}
				c.frame(&page.EventScreencastFrame{Data: make([]byte, tt.size), SessionID: int64(i)})
			}
			if len(c.refs) != tt.wantKept || c.dropped != tt.frames-tt.wantKept {
				t.Errorf("kept %d, dropped %d of %d; want %d kept", len(c.refs), c.dropped, tt.frames, tt.wantKept)
			}
			if len(c.acks) != tt.frames {
				t.Errorf("%d acknowledgements queued, want one a frame (%d)", len(c.acks), tt.frames)
			}
		})
	}
}
