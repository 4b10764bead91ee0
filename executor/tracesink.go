package executor

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/chromedp/cdproto/tracing"
)

// traceMaxBytes is the most of the browser's trace a performance_trace
// keeps.
const traceMaxBytes = 32 << 20

// traceSink gathers the events of the trace a performance_trace records:
// the tab's listener hands them over (pageWatch.listen), and done closes
// when the browser says the trace is complete.
type traceSink struct {
	mu      sync.Mutex
	events  []json.RawMessage
	size    int
	dropped int
	done    chan struct{}
	ended   bool
}

// add keeps a bucket of trace events within traceMaxBytes.
func (t *traceSink) add(e *tracing.EventDataCollected) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range e.Value {
		if t.size+len(v) > traceMaxBytes {
			t.dropped++
			continue
		}
		t.size += len(v)
		t.events = append(t.events, json.RawMessage(slices.Clone([]byte(v))))
	}
}

// complete marks the trace handed over.
func (t *traceSink) complete() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.ended = true
		close(t.done)
	}
}
