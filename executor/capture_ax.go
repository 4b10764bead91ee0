package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/executor/snapshot"
)

// A snapshot needs the accessibility tree only for the elements whose
// role, name, value or state the renderer reads: those whose tag gives
// them a role it tells apart (axTags), and those with a role, tabindex,
// contenteditable or aria-* attribute. Reading the whole tree costs
// Chromium about 60–85 µs a node of the tree; asking for one element costs
// about 0.15–0.2 ms, and the layout must be read first to name them.
//
// Some elements the renderer needs no node of the tree for, unless an
// attribute can change their role (tagDecided): headings, lists and list
// items, whose tag alone decides how they are rendered (no role Chromium
// gives them without such an attribute is a control, a landmark or an
// image), and options and their groups, which a select's line lists by
// their labels (337 of MDN's 404 such elements: it is read element by
// element since, 41–47 ms against 62–70 for the whole tree). Plain links,
// most of such elements on a long text, are not asked about either: their
// role and target are derived from the layout (snapshot/links.go). Nor are
// the rows and cells that sit plainly in a table whose own node says it is a
// table of data (snapshot/tableparts.go): those of a table for layout are
// asked about once the tables' nodes are read. The Go specification then
// asks about 1 element of its 4,013, and the read takes 155–165 ms instead
// of 580–630 for the whole tree (of 9,757 nodes); a Wikipedia article
// 108–121 ms instead of 234–256; the Wikipedia list of films (137 of its
// 2,171 elements) 97–108 ms instead of 177–201; and LWN, whose 398 rows and
// cells of data were most of the 450 elements it asked about, asks about
// 57 of 703 and takes 37–43 ms instead of 69–85. A short page of tables is
// read faster whole. So the tab's document is read element by element only
// where such elements are fewer than a quarter of its elements
// (countCandidatesJS, read first).
//
// Both reads render the same snapshot (TestElementReadRendersAsWholeTree);
// what either says is Chromium's, or for a plain link what it would say
// (but for what snapshot/links.go says the layout cannot show), so the page,
// which sets the counts, chooses only how long the read takes. Custom
// elements (a tag with a hyphen: a role given through ElementInternals has
// no attribute) and elements displayed as list items are asked about too.
// What the element read still cannot see is a role only CSS gives (an
// element whose content is an image, with alternative text): it shows as
// the whole tree would show its text. A read of an element that fails
// (the page changed meanwhile) gives the whole tree instead; a read cut
// short by the call's deadline fails the snapshot, as the whole tree's
// would.

// axTags are the tags whose implicit roles the renderer tells apart and
// reads from the tree.
var axTags = []string{"a", "area", "button", "input", "select", "textarea",
	"summary", "details", "img", "image", "svg", "table", "thead", "tbody", "tfoot", "tr", "td", "th",
	"main", "nav", "header", "footer", "aside", "section", "article", "form", "search",
	"dir", "dialog", "label", "fieldset", "progress", "meter", "output", "iframe", "frame", "canvas", "video", "audio"}

// tagDecided are the tags the renderer renders by the tag itself: asked
// about only with an attribute that can give them another role.
var tagDecided = map[string]bool{"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "menu": true, "li": true, "option": true, "optgroup": true}

// countCandidatesJS counts the elements of the tab's own document and
// those of them a snapshot would ask the tree about, but for those
// displayed as list items, which only the layout tells, taking every <a>
// with an href and no attribute that can change its role for a plain
// link, and every row and cell that sits plainly in a table
// (snapshot/tableparts.go) as one not asked about when the table looks like
// one of data (only the table's node tells: the element read asks about the
// rows and cells of a table for layout, so a page of those is read
// whole); elements in shadow roots and frames are not counted; and it
// says whether the document has, outside shadow roots, what keeps it from
// having plain links and rows and cells derived (snapshot/links.go): a modal
// dialog or a fullscreen element (:modal), aria-owns or aria-modal. Only
// the choice of read rests on it: the element read checks for these
// itself (snapshot.PlainLinks, snapshot.TableParts, topLayer).
var countCandidatesJS = `(() => {
  const tags = new Set(` + "['" + strings.Join(axTags, "','") + "']" + `);
  const html = 'http://www.w3.org/1999/xhtml';
  const is = (e, ...names) => e !== null && e.namespaceURI === html && names.includes(e.localName);
  // The table a row sits plainly in, if it looks like one of data (the
  // node says, which the count cannot read): a role of one, a caption,
  // a head or foot, columns, or a header cell.
  const data = new Map();
  const inTable = row => {
    let t = row.parentElement;
    if (is(t, 'thead', 'tbody', 'tfoot')) t = t.parentElement;
    if (!is(t, 'table')) return false;
    if (!data.has(t)) {
      const role = t.getAttribute('role');
      data.set(t, role === 'table' || role === 'grid' || role === 'treegrid' || t.caption !== null || t.tHead !== null || t.tFoot !== null ||
        t.querySelector(':scope > colgroup, :scope > col, th') !== null);
    }
    return data.get(t);
  };
  // The rows that sit plainly in a table of data, met before their cells.
  const rows = new Set();
  let all = 0, asked = 0, links = 0, parts = 0, rearranged = document.querySelector(':modal') !== null;
  for (const e of document.getElementsByTagName('*')) {
    all++;
    let role = false;
    for (const n of e.getAttributeNames()) {
      if (n === 'aria-owns' || n === 'aria-modal') rearranged = true;
      if (n === 'role' || n === 'tabindex' || n === 'contenteditable' || n.startsWith('aria-')) role = true;
    }
    const link = is(e, 'a') && e.hasAttribute('href');
    const part = is(e, 'tr') ? inTable(e) : is(e, 'td', 'th') && rows.has(e.parentElement);
    if (part && !role && e.localName === 'tr') rows.add(e);
    if (role || !link && !part && (tags.has(e.localName) || e.localName.includes('-'))) asked++;
    else if (link) links++;
    else if (part) parts++;
  }
  return [all, rearranged ? asked + links + parts : asked, rearranged ? 1 : 0];
})()`

// chooseRead reports whether the tab's document has few enough elements
// the tree is asked about that asking for them alone is the quicker read,
// and whether plain links are looked for in it. Any error answers no:
// the whole tree is always right.
func (s *session) chooseRead(ctx context.Context) (byElement, plainLinks bool) {
	var n [3]int
	if err := s.evalValueInWorld(ctx, countCandidatesJS, &n); err != nil {
		return false, false
	}
	return n[0] >= minElementsForCandidates && n[1]*4 < n[0], n[2] == 0
}

// minElementsForCandidates: below it the whole tree takes a few ms, and
// is read as before.
const minElementsForCandidates = 300

// isAXTag is axTags as a set.
var isAXTag = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range axTags {
		m[t] = true
	}
	return m
}()

// axCandidates are the elements of every document of layout that a
// snapshot asks the tree about, but for the plain links and the rows and
// cells that sit plainly in a table (parts).
func axCandidates(layout *domsnapshot.CaptureSnapshotResult, plain map[cdp.BackendNodeID]*snapshot.AXNode, parts map[cdp.BackendNodeID]cdp.BackendNodeID) []cdp.BackendNodeID {
	var out []cdp.BackendNodeID
	for _, d := range layout.Documents {
		listItems := map[int64]bool{} // node index -> displayed as a list item
		for li, ni := range d.Layout.NodeIndex {
			if li < len(d.Layout.Styles) && len(d.Layout.Styles[li]) > 0 && snapshot.StringAt(layout.Strings, domsnapshot.StringIndex(d.Layout.Styles[li][0])) == "list-item" {
				listItems[ni] = true
			}
		}
		for i, name := range d.Nodes.NodeName {
			if d.Nodes.NodeType[i] != 1 {
				continue
			}
			tag := strings.ToLower(snapshot.StringAt(layout.Strings, name))
			want := isAXTag[tag] || strings.Contains(tag, "-") || listItems[int64(i)] && !tagDecided[tag]
			if !want && i < len(d.Nodes.Attributes) {
				want = snapshot.MayHaveRole(layout, d.Nodes.Attributes[i])
			}
			id := d.Nodes.BackendNodeID[i]
			if _, part := parts[id]; want && plain[id] == nil && !part {
				out = append(out, id)
			}
		}
	}
	return out
}

// partialAXTree is Accessibility.getPartialAXTree read into axNode, as
// fullAXTree.
var partialAXTree = cdp.Command[accessibility.GetPartialAXTreeParams, axTree]{Method: accessibility.CommandGetPartialAXTree}

// axInFlight bounds the element reads sent at once.
const axInFlight = 64

// readByElements reads the layout of a process's documents, then the
// tree's node of each element a snapshot asks about, but for the plain
// links of its top document when derive is true, and the rows and cells
// that sit plainly in a table whose node says it is a table of data
// (snapshot/tableparts.go): those of any other table are asked about once
// the tables' nodes are read. An element whose node cannot be read (gone
// meanwhile) fails it with errElementRead, and the caller reads the whole
// tree instead.
func readByElements(exec context.Context, derive bool) (domsnapshot.CaptureSnapshotResult, map[cdp.BackendNodeID]*snapshot.AXNode, error) {
	layout, err := readLayout(exec)
	if err != nil {
		return layout, nil, fmt.Errorf("read the page's layout: %w", err)
	}
	var (
		plain map[cdp.BackendNodeID]*snapshot.AXNode
		parts map[cdp.BackendNodeID]cdp.BackendNodeID
	)
	if derive && !topLayer(exec) {
		plain, parts = snapshot.PlainLinks(&layout), snapshot.TableParts(&layout)
	}
	nodes, failed := askTree(exec, axCandidates(&layout, plain, parts))
	ax := axIndex(nodes)
	var again []cdp.BackendNodeID
	for part, table := range parts {
		if t := ax[table]; t == nil || !snapshot.TableOfData(t.Role) {
			again = append(again, part)
		}
	}
	if len(again) > 0 && !failed {
		more, f := askTree(exec, again)
		failed = f
		maps.Copy(ax, axIndex(more))
	}
	if err := exec.Err(); err != nil {
		return layout, nil, fmt.Errorf("read the accessibility tree: %w", err)
	}
	if failed || len(plain)+len(parts) > 0 && topLayer(exec) {
		return domsnapshot.CaptureSnapshotResult{}, nil, errElementRead
	}
	maps.Copy(ax, plain)
	return layout, ax, nil
}

// askTree reads the tree's node of each element of ids, axInFlight at a
// time; failed says one could not be read. It stops asking once exec
// ends (the caller checks it).
func askTree(exec context.Context, ids []cdp.BackendNodeID) (nodes []*axNode, failed bool) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	sem := make(chan struct{}, axInFlight)
	relatives := false
ask:
	for _, id := range ids {
		select {
		case sem <- struct{}{}:
		case <-exec.Done():
			break ask
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := chromedp.Call(exec, partialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: id, FetchRelatives: &relatives})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = true
				return
			}
			nodes = append(nodes, res.Nodes...)
		}()
	}
	wg.Wait()
	return nodes, failed
}

// buildTree has Chromium build the accessibility tree of the tab's
// document (which its first read of a node of the tree does: 20 ms of the
// films list's element read, 40 ms of the Go specification's) while the
// layout is read: it reads the document's node, from the gate's world,
// once a first round trip (the document's object) has put it behind the
// layout read the caller sends meanwhile, so that the renderer builds the
// tree while the layout is sent and decoded. Were the two to arrive the
// other way round, the tree would be built first, which costs time only.
// It fails silently: the element read builds the tree anyway. The
// returned func waits for it. The document's object is the call's, and
// released with its others (objects.go).
func (s *session) buildTree(exec context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		doc, err := s.evalInWorld(exec, "document")
		if err != nil || doc == nil || doc.ObjectID == "" {
			return
		}
		relatives := false
		_, _ = chromedp.Call(exec, partialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: doc.ObjectID, FetchRelatives: &relatives})
	}()
	return func() { <-done }
}

// topLayer reports whether the tab's document has an element in the top
// layer, wherever it is (in a shadow tree, undisplayed, or without its
// open attribute): a modal dialog or a fullscreen element makes the rest
// of the page inert to the tree, and a popover is treated alike. Plain
// links are then not derived (snapshot/links.go). It is asked after the
// layout is read, so that one shown before the read is seen, and again after
// the element reads: one shown meanwhile sends the snapshot to the whole
// tree. An error answers yes.
func topLayer(exec context.Context) bool {
	res, err := chromedp.Call(exec, dom.GetTopLayerElements, cdp.Empty{})
	return err != nil || len(res.NodeIDs) > 0
}

// errElementRead: an element's node of the tree could not be read, or
// the page may have turned inert while plain links were derived; the
// whole tree is read instead.
var errElementRead = errors.New("an element's node of the accessibility tree could not be read")

// readWholeTree reads the layout and the whole accessibility tree of a
// process's documents, one round trip each in parallel, and the trees of
// its same-process frames.
func (s *session) readWholeTree(exec context.Context) (domsnapshot.CaptureSnapshotResult, map[cdp.BackendNodeID]*snapshot.AXNode, error) {
	var (
		wg    sync.WaitGroup
		axRes axTree
		axErr error
	)
	// The tree is asked for first: the renderer builds one, then the
	// other, and while the tree's long reply is sent and decoded here it
	// is free to build the layout. Asked for the other way round, the
	// layout's time comes on top (the Go specification: 562–567 ms for
	// both, 509–512 in this order, the tree alone 503–505; Wikipedia:
	// 230, 192–221 and 197). The layout is asked for once the goroutine
	// asking for the tree runs; should it still overtake the tree, the
	// snapshot is only slower.
	wg.Add(1)
	asked := make(chan struct{})
	go func() {
		defer wg.Done()
		close(asked)
		axRes, axErr = chromedp.Call(exec, fullAXTree, accessibility.GetFullAXTreeParams{})
	}()
	<-asked
	layout, lErr := readLayout(exec)
	wg.Wait()
	if axErr != nil {
		return layout, nil, fmt.Errorf("read the accessibility tree: %w", axErr)
	}
	if lErr != nil {
		return layout, nil, fmt.Errorf("read the page's layout: %w", lErr)
	}
	ax := axIndex(axRes.Nodes)
	s.frameAX(exec, &layout, ax)
	return layout, ax, nil
}

// layoutRead is DOMSnapshot.captureSnapshot read into the fields a
// snapshot uses (layoutDoc), as fullAXTree is read: the layout's bounds
// and text boxes, and the nodes' rarer data, are never read, and on a
// long page they are megabytes of numbers that Go would otherwise decode
// (the Go specification: the read took 103–109 ms instead of 114–131).
var layoutRead = cdp.Command[domsnapshot.CaptureSnapshotParams, layoutResult]{Method: domsnapshot.CommandCaptureSnapshot}

type layoutResult struct {
	Documents []*layoutDoc `json:"documents"`
	Strings   []string     `json:"strings"`
}

type layoutDoc struct {
	DocumentURL domsnapshot.StringIndex `json:"documentURL"`
	BaseURL     domsnapshot.StringIndex `json:"baseURL"`
	FrameID     domsnapshot.StringIndex `json:"frameId"`
	Nodes       struct {
		ParentIndex          []int64                      `json:"parentIndex"`
		NodeType             []int64                      `json:"nodeType"`
		NodeName             []domsnapshot.StringIndex    `json:"nodeName"`
		NodeValue            []domsnapshot.StringIndex    `json:"nodeValue"`
		BackendNodeID        []cdp.BackendNodeID          `json:"backendNodeId"`
		Attributes           []domsnapshot.ArrayOfStrings `json:"attributes"`
		ContentDocumentIndex *domsnapshot.RareIntegerData `json:"contentDocumentIndex"`
		PseudoType           *domsnapshot.RareStringData  `json:"pseudoType"`
		OptionSelected       *domsnapshot.RareBooleanData `json:"optionSelected"`
	} `json:"nodes"`
	Layout struct {
		NodeIndex []int64                      `json:"nodeIndex"`
		Styles    []domsnapshot.ArrayOfStrings `json:"styles"`
		Text      []domsnapshot.StringIndex    `json:"text"`
	} `json:"layout"`
}

// readLayout reads the layout of a process's documents: their nodes, and
// the computed styles (snapshot.ComputedStyles) and text of those displayed.
func readLayout(exec context.Context) (domsnapshot.CaptureSnapshotResult, error) {
	res, err := chromedp.Call(exec, layoutRead, domsnapshot.CaptureSnapshotParams{ComputedStyles: snapshot.ComputedStyles()})
	if err != nil {
		return domsnapshot.CaptureSnapshotResult{}, err
	}
	out := domsnapshot.CaptureSnapshotResult{Strings: res.Strings}
	for _, d := range res.Documents {
		n, l := &d.Nodes, &d.Layout
		out.Documents = append(out.Documents, &domsnapshot.DocumentSnapshot{
			DocumentURL: d.DocumentURL,
			BaseURL:     d.BaseURL,
			FrameID:     d.FrameID,
			Nodes: &domsnapshot.NodeTreeSnapshot{ParentIndex: n.ParentIndex, NodeType: n.NodeType, NodeName: n.NodeName,
				NodeValue: n.NodeValue, BackendNodeID: n.BackendNodeID, Attributes: n.Attributes,
				ContentDocumentIndex: n.ContentDocumentIndex, PseudoType: n.PseudoType, OptionSelected: n.OptionSelected},
			Layout:    &domsnapshot.LayoutTreeSnapshot{NodeIndex: l.NodeIndex, Styles: l.Styles, Text: l.Text},
			TextBoxes: &domsnapshot.TextBoxSnapshot{},
		})
	}
	return out, nil
}

// frameAX adds the accessibility trees of the embedded documents the
// layout holds (same-process frames) to ax, read in parallel; a frame
// whose tree cannot be read shows its text without controls.
func (s *session) frameAX(ctx context.Context, layout *domsnapshot.CaptureSnapshotResult, ax map[cdp.BackendNodeID]*snapshot.AXNode) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, d := range layout.Documents[min(1, len(layout.Documents)):] {
		frame := cdp.FrameID(snapshot.StringAt(layout.Strings, d.FrameID))
		if frame == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := chromedp.Call(ctx, fullAXTree, accessibility.GetFullAXTreeParams{FrameID: frame})
			if err != nil {
				return
			}
			mu.Lock()
			maps.Copy(ax, axIndex(res.Nodes))
			mu.Unlock()
		}()
	}
	wg.Wait()
}
