package executor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/toolclad"
)

// BenchmarkClickPointer measures a click's pointer sequence alone (the
// element's centre, then a check of the page and a mouse event for each
// of move, press and release) on a button that does nothing, without the
// call's quiet window: on a still page, and on one that draws a frame
// whenever it can (a requestAnimationFrame loop, as a spinner or a
// carousel does). It reports the median and the 95th percentile of the
// clicks as well as the mean.
func BenchmarkClickPointer(b *testing.B) {
	for _, page := range []struct{ name, script string }{
		{"still", ""},
		{"animating", "<script>(function f(){document.title=performance.now();requestAnimationFrame(f)})()</script>"},
	} {
		b.Run(page.name, func(b *testing.B) {
			s, ctx := newBenchRig(b, []byte("<!doctype html><button id=b style='width:200px;height:60px'>Press</button>"+page.script)).openPage(b)
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				el, err := s.querySelector(ctx, "#b")
				if err != nil {
					b.Fatal(err)
				}
				if err := s.click(ctx, el, gate.Destination{}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// BenchmarkHitCheck measures one of a click's checks of the page (the
// browser's hit test at the element's centre, and what a click there
// would do), which a click makes before each of its move, press and
// release; two of them come after the move's frame, where each saving
// shortens the click. The point is on the button's text, so the hit is
// the button itself.
func BenchmarkHitCheck(b *testing.B) {
	rig := newBenchRig(b, []byte("<!doctype html><form action=/next><button id=b style='width:200px;height:60px'>Press</button></form>"))
	s, ctx := rig.openPage(b)
	el, err := s.querySelector(ctx, "#b")
	if err != nil {
		b.Fatal(err)
	}
	x, y, err := s.centre(ctx, el, "clicked")
	if err != nil {
		b.Fatal(err)
	}
	judged := map[string]any{"urls": []string{rig.url + "next"}, "submits": true}
	for b.Loop() {
		if err := s.hitCheck(ctx, el, x, y, judged); err != nil {
			b.Fatal(err)
		}
	}
}

// openPage opens the rig's page in a session of a new executor, and
// returns the session and a context on its tab for a minute; both end
// with b.
func (r *benchRig) openPage(b *testing.B) (*session, context.Context) {
	e := r.newExecutor()
	b.Cleanup(e.Close)
	r.call(b, e, "bench", "navigate", map[string]any{"url": r.url})
	s, _ := e.session(&toolclad.Call{SessionID: "bench", Manifest: r.m})
	ctx, cancel := context.WithTimeout(s.tab.ctx, time.Minute)
	b.Cleanup(cancel)
	return s, ctx
}
