package snapshot

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"
)

// Ref is the element a ref names: its node, the out-of-process frame
// whose process it is in ("" for the tab's), and the same-process frame
// whose document it is in ("" for that process's top document).
type Ref struct {
	Node  cdp.BackendNodeID
	Frame cdp.FrameID
	OOPIF target.ID
	// Loader is the out-of-process frame's document as the snapshot read
	// it: a frame that has loaded another since (perhaps in another
	// process, whose node ids start again) makes the ref stale.
	Loader cdp.LoaderID
	Hosts  []FrameHost // the iframe elements that lead to OOPIF
}

// FrameHost is an iframe element on the way to an out-of-process frame:
// its node, in the process of OOPIF ("" for the tab's). Nested: the
// snapshot found it in a document of a frame inside that process, not in
// the process's top document.
type FrameHost struct {
	OOPIF  target.ID
	Node   cdp.BackendNodeID
	Nested bool
}

// ref gives node i of v a ref.
func (r *renderer) ref(v *docView, i int) string {
	r.next++
	ref := "e" + strconv.Itoa(r.next)
	t := Ref{Node: v.d.Nodes.BackendNodeID[i], Hosts: r.hosts, OOPIF: r.cur.Target, Loader: r.cur.Loader}
	if v != r.curTop {
		t.Frame = cdp.FrameID(r.str(v.d.FrameID))
	}
	r.refs[ref] = t
	return ref
}

// frame renders an embedded document in place, marked; its controls get
// refs like the tab's own (a ref knows its frame).
func (r *renderer) frame(v *docView, i, doc int) {
	r.flush()
	if doc < 0 || doc >= len(r.snap.Documents) {
		return
	}
	r.frameDoc(r.snap.Documents[doc], false)
}

// frameDoc renders a frame's document between its marks; top: it is the
// top document of an out-of-process frame's capture.
func (r *renderer) frameDoc(d *domsnapshot.DocumentSnapshot, top bool) {
	if u := r.str(d.DocumentURL); strings.HasPrefix(u, "chrome-error:") {
		r.line("[frame: not loaded]") // refused, or failed: the browser's error page
		return
	}
	fv := newDocView(d)
	if top {
		r.curTop = fv
	}
	u := r.str(d.DocumentURL)
	r.line("[frame " + strconv.Quote(r.frameURL(r.str(d.FrameID), u)) + ":]")
	lines := r.lines()
	n := len(*lines)
	outer := r.doc
	if ownHost(u) {
		r.doc = Doc{r.str(d.FrameID), u} // a frame with no host of its own (about:blank, srcdoc) shows its embedder's content
	}
	for n, p := range d.Nodes.ParentIndex {
		if p < 0 {
			r.render(fv, n)
		}
	}
	r.flush()
	r.doc = outer
	if len(*lines) == n && r.gather == 0 {
		*lines = (*lines)[:n-1] // an empty frame (about:blank, an ad slot) says nothing
		return
	}
	r.line("[end frame]")
}

// oopifAt is the out-of-process frame an iframe element of the current
// process shows (nil: none read).
func (r *renderer) oopifAt(node cdp.BackendNodeID) *Capture { return r.cur.Frames[node] }

// oopif renders the document of an out-of-process frame in place, from
// its own capture (its strings, nodes and accessibility tree are its
// process's); its controls get refs that name the frame.
func (r *renderer) oopif(fc *Capture, host FrameHost) {
	r.flush()
	if fc.Layout == nil || len(fc.Layout.Documents) == 0 {
		r.line("[frame " + strconv.Quote(r.frameURL(string(fc.Target), fc.URL)) + ": its content could not be read]")
		return
	}
	snap, ax, cur, curTop, hosts := r.snap, r.ax, r.cur, r.curTop, r.hosts
	defer func() { r.snap, r.ax, r.cur, r.curTop, r.hosts = snap, ax, cur, curTop, hosts }()
	r.snap, r.ax, r.cur = fc.Layout, fc.AX, fc
	r.hosts = append(slices.Clip(hosts), host)
	r.frameDoc(fc.Layout.Documents[0], true)
}

// frameURL is a frame's URL as its mark shows it (Options.FrameURL).
func (r *renderer) frameURL(frame, u string) string {
	if r.opts.FrameURL != nil {
		return r.opts.FrameURL(frame, u)
	}
	return u
}

// ownHost reports whether a document at u has a host of its own: an
// http(s) URL's, or a blob: URL's inner one; about:blank, srcdoc, data:
// have none.
func ownHost(u string) bool {
	u = strings.TrimPrefix(u, "blob:")
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// lines are the lines being written: the main landmark's or the rest.
func (r *renderer) lines() *[]line {
	if r.inMain > 0 {
		return &r.main
	}
	return &r.rest
}
