package snapshot

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// A table's rows and cells are most of what the executor's element read
// (executor/axread.go) would ask the tree about on a page of data tables:
// 312 of the 442 such elements of the Wikipedia list of films. Of a row or a
// cell (tr, td, th) the renderer reads only whether Chromium takes it for a
// part of a table laid out for layout (LayoutTableRow, LayoutTableCell); any
// other role it gives them (row, cell, columnheader, rowheader, gridcell, a
// generic one) renders as their tag does. Chromium gives a row a layout
// role when the table it is in is one for layout, and a cell when its row
// has one. So the rows and cells that sit plainly in a table (TableParts)
// are asked about only when the table's own node (asked about, as every
// table is) does not say it is a table of data:
//   - a row (tr) whose parent is the table, or a thead, tbody or tfoot
//     whose parent is the table, and a cell (td, th) whose parent is such
//     a row: elements of the tab's own document (not of a frame in it)
//     named in upper case, as HTML's are (one of another namespace
//     created with such a name is no table's part to Chromium, which
//     gives it no layout role), neither with a role, tabindex,
//     contenteditable or aria-* attribute. The structure only names the
//     table whose node decides: a row or a cell anywhere else, or in a table
//     whose node is not read (one the tree ignores), is asked about;
//   - and, as for plain links (links.go), no aria-owns or aria-modal in
//     the document and nothing in its top layer (a precaution: no page
//     was found where they change such a role).
//
// Tables hidden or inert, rows and cells displayed otherwise (block,
// contents), hidden rows with shown cells and rows built by script
// outside a table, the shapes where a review found that an earlier rule
// (the layout roles taken from the table's node for every row and cell)
// went wrong, are on the controls page of the executor's
// TestElementReadRendersAsWholeTree as tables of data too: Chromium gives
// none of their rows and cells a layout role, and a hidden or inert table's
// node is not one of data.

// dataTableRoles are the roles of a table's node that make it a table of
// data: its plain rows and cells are not asked about.
var dataTableRoles = map[string]bool{"table": true, "grid": true, "treegrid": true}

// TableOfData reports whether role, of a table's node, makes it a table
// of data, whose rows and cells that sit plainly in it (TableParts) the
// tree need not be asked about.
func TableOfData(role string) bool { return dataTableRoles[role] }

// tableSections are the sections of a table a row may sit plainly in.
var tableSections = map[string]bool{"THEAD": true, "TBODY": true, "TFOOT": true}

// TableParts are the rows and cells of layout's top document that sit
// plainly in a table (see above), by node, with the node of their table.
// The caller checks the top layer.
func TableParts(layout *domsnapshot.CaptureSnapshotResult) map[cdp.BackendNodeID]cdp.BackendNodeID {
	if len(layout.Documents) == 0 {
		return nil
	}
	d := layout.Documents[0]
	doc := docNodes{layout, d}
	if doc.rearranged() {
		return nil
	}
	n := len(d.Nodes.NodeType)
	// An HTML element's name is upper case.
	name := func(i int) string {
		if i < 0 || i >= n || d.Nodes.NodeType[i] != 1 {
			return ""
		}
		return doc.str(d.Nodes.NodeName[i])
	}
	tableOf := map[int]int{} // a plain row -> its table
	out := map[cdp.BackendNodeID]cdp.BackendNodeID{}
	for i := range n {
		if d.Nodes.NodeType[i] != 1 || doc.mayHaveRole(i) {
			continue
		}
		p := int(d.Nodes.ParentIndex[i])
		var table int
		switch name(i) {
		case "TR":
			table = p
			if tableSections[name(p)] {
				table = int(d.Nodes.ParentIndex[p])
			}
			if name(table) != "TABLE" {
				continue
			}
			tableOf[i] = table
		case "TD", "TH":
			t, ok := tableOf[p]
			if !ok {
				continue
			}
			table = t
		default:
			continue
		}
		out[d.Nodes.BackendNodeID[i]] = d.Nodes.BackendNodeID[table]
	}
	return out
}
