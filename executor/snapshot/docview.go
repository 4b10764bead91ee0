package snapshot

import (
	"strings"

	"github.com/chromedp/cdproto/domsnapshot"
)

// docView is one document of the snapshot, with its tree and layout
// indexed.
type docView struct {
	d        *domsnapshot.DocumentSnapshot
	children [][]int
	layout   map[int]int // node index -> layout index
	rare     rareIndex
}

// rareIndex holds the snapshot's sparse per-node data by node index.
type rareIndex struct {
	contentDoc map[int]int
	pseudo     map[int]bool
	selected   map[int]bool // options selected
}

func newDocView(d *domsnapshot.DocumentSnapshot) *docView {
	n := len(d.Nodes.ParentIndex)
	v := &docView{d: d, children: make([][]int, n), layout: make(map[int]int, len(d.Layout.NodeIndex))}
	for i, p := range d.Nodes.ParentIndex {
		if p >= 0 && int(p) < n {
			v.children[p] = append(v.children[p], i)
		}
	}
	for li, ni := range d.Layout.NodeIndex {
		v.layout[int(ni)] = li
	}
	v.rare.contentDoc = map[int]int{}
	if c := d.Nodes.ContentDocumentIndex; c != nil {
		for i, idx := range c.Index {
			v.rare.contentDoc[int(idx)] = int(c.Value[i])
		}
	}
	v.rare.pseudo = map[int]bool{}
	if p := d.Nodes.PseudoType; p != nil {
		for _, idx := range p.Index {
			v.rare.pseudo[int(idx)] = true
		}
	}
	v.rare.selected = map[int]bool{}
	if o := d.Nodes.OptionSelected; o != nil {
		for _, idx := range o.Index {
			v.rare.selected[int(idx)] = true
		}
	}
	return v
}

func (r *renderer) str(i domsnapshot.StringIndex) string { return StringAt(r.snap.Strings, i) }

// style is computed style k (an index of ComputedStyles) of the node with
// layout index li.
func (r *renderer) style(v *docView, li, k int) string { return docNodes{r.snap, v.d}.style(li, k) }

func (r *renderer) attr(v *docView, i int, name string) (string, bool) {
	return docNodes{r.snap, v.d}.attr(i, name)
}

// docNodes is one document of a capture's layout, read node by node.
type docNodes struct {
	layout *domsnapshot.CaptureSnapshotResult
	d      *domsnapshot.DocumentSnapshot
}

func (doc docNodes) str(i domsnapshot.StringIndex) string { return StringAt(doc.layout.Strings, i) }

func (doc docNodes) tag(i int) string { return strings.ToLower(doc.str(doc.d.Nodes.NodeName[i])) }

func (doc docNodes) attr(i int, name string) (string, bool) {
	if i >= len(doc.d.Nodes.Attributes) {
		return "", false
	}
	a := doc.d.Nodes.Attributes[i]
	for k := 0; k+1 < len(a); k += 2 {
		if strings.EqualFold(doc.str(domsnapshot.StringIndex(a[k])), name) {
			return doc.str(domsnapshot.StringIndex(a[k+1])), true
		}
	}
	return "", false
}

func (doc docNodes) has(i int, name string) bool {
	_, ok := doc.attr(i, name)
	return ok
}

// style is computed style k (an index of ComputedStyles) of the node laid
// out at li.
func (doc docNodes) style(li, k int) string {
	st := doc.d.Layout.Styles
	if li >= len(st) || k >= len(st[li]) {
		return ""
	}
	return doc.str(domsnapshot.StringIndex(st[li][k]))
}
