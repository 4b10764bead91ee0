package snapshot

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"
)

// Capture is what a snapshot read of one process's documents: the tab's,
// or an out-of-process frame's (Target). Each process has its own strings,
// node ids and accessibility tree. It is plain data, and saves as JSON.
type Capture struct {
	// Target is the out-of-process frame's target ("" for the tab).
	Target target.ID `json:"target,omitempty"`
	// URL is an out-of-process frame's document as its iframe element
	// says, shown when its content could not be read (Layout nil).
	URL string `json:"url,omitempty"`
	// Loader is an out-of-process frame's document as it was read: a
	// frame that loaded another meanwhile has none, and its refs are
	// stale at once.
	Loader cdp.LoaderID `json:"loader,omitempty"`
	// Layout is DOMSnapshot.captureSnapshot of the process's documents,
	// with the computed styles ComputedStyles names (nil: not read).
	Layout *domsnapshot.CaptureSnapshotResult `json:"layout,omitempty"`
	// AX is what the accessibility tree says of the documents' elements,
	// by DOM node; an element it has no node of renders by its tag.
	AX map[cdp.BackendNodeID]*AXNode `json:"ax,omitempty"`
	// Frames are the out-of-process frames its documents embed, by the
	// node of their iframe element.
	Frames map[cdp.BackendNodeID]*Capture `json:"frames,omitempty"`
}

// AXNode is what the accessibility tree says of one element: its role,
// name and value, and its properties (states such as checked or
// expanded, a link's url) as strings.
type AXNode struct {
	Role  string            `json:"role,omitempty"`
	Name  string            `json:"name,omitempty"`
	Value string            `json:"value,omitempty"`
	Props map[string]string `json:"props,omitempty"`
}

// ComputedStyles are the computed styles the renderer reads, in this
// order, of every node laid out: the capture's layout must be read with
// them (DOMSnapshot.captureSnapshot's computedStyles).
func ComputedStyles() []string {
	return []string{"display", "visibility", "white-space", "interactivity"}
}

// The indexes in ComputedStyles of the styles the renderer reads.
const (
	styleDisplay = iota
	styleVisibility
	styleWhiteSpace
	// styleInteractivity: inert in an inert element and all it holds (the
	// inert attribute, or the style itself).
	styleInteractivity
)

// StringAt is string i of a capture's strings ("" for an index out of
// range, as -1 is for a value the node has not).
func StringAt(strs []string, i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(strs) {
		return ""
	}
	return strs[i]
}
