// Package snapshottest keeps the saved captures package snapshot is
// tested on: reading and writing them (testdata/NAME.capture.json), their
// goldens (testdata/NAME.golden: the rendered text, then what each ref
// names), and a readable difference between a golden and a rendering. The
// executor takes the captures from a real browser (its
// TestSnapshotCaptures, with -update-captures); package snapshot renders
// them without one.
package snapshottest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/target"

	"github.com/browsergate/browsergate/executor/snapshot"
)

// Suffixes of a saved capture's files: NAME.capture.json, NAME.golden.
const (
	CaptureSuffix = ".capture.json"
	GoldenSuffix  = ".golden"
)

// Names are the names of the captures saved in dir, sorted.
func Names(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+CaptureSuffix))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), CaptureSuffix))
	}
	slices.Sort(names)
	return names, nil
}

// Read reads the capture saved in dir as name.
func Read(dir, name string) (*snapshot.Capture, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+CaptureSuffix))
	if err != nil {
		return nil, err
	}
	var c snapshot.Capture
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("read capture %s: %w", name, err)
	}
	return &c, nil
}

// Write saves c in dir as name, and its golden beside it.
func Write(dir, name string, c *snapshot.Capture, golden string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("write capture %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+CaptureSuffix), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return WriteGolden(dir, name, golden)
}

// ReadGolden reads the golden of the capture saved in dir as name.
func ReadGolden(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+GoldenSuffix))
	return string(b), err
}

// WriteGolden writes the golden of the capture saved in dir as name.
func WriteGolden(dir, name, golden string) error {
	return os.WriteFile(filepath.Join(dir, name+GoldenSuffix), []byte(golden), 0o644)
}

// Golden is c rendered whole, as a golden file holds it: the text, then
// a line for each ref, in order, with the element it names (its tag),
// the document it is in, and, for one in an out-of-process frame, the
// iframe elements on the way to it. Node and target ids are left out:
// they differ from one capture of a page to the next. A ref that names
// no element of the capture, or one of another document than it says,
// is an error.
func Golden(c *snapshot.Capture) (string, error) {
	page, err := snapshot.Render(c, snapshot.Options{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(page.Text)
	b.WriteString("\n\n--- refs\n")
	refs := make([]string, 0, len(page.Refs))
	for ref := range page.Refs {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b string) int { return refNumber(a) - refNumber(b) })
	for _, ref := range refs {
		line, err := describe(c, page.Refs[ref])
		if err != nil {
			return "", fmt.Errorf("ref %s: %w", ref, err)
		}
		b.WriteString(ref + " " + line + "\n")
	}
	return b.String(), nil
}

func refNumber(ref string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(ref, "e"))
	return n
}

// describe says what ref names in c: "BUTTON in URL", and for an element
// of an out-of-process frame, "(out of process, through IFRAME, IFRAME
// nested)": the iframe elements that lead to it, each in the process of
// the one before.
func describe(c *snapshot.Capture, ref snapshot.Ref) (string, error) {
	proc := process(c, ref.OOPIF)
	if proc == nil || proc.Layout == nil {
		return "", fmt.Errorf("no capture of the process %q", ref.OOPIF)
	}
	if proc.Loader != ref.Loader {
		return "", fmt.Errorf("loader %q, the capture's is %q", ref.Loader, proc.Loader)
	}
	tag, doc, err := find(proc.Layout, ref.Node)
	if err != nil {
		return "", err
	}
	d := proc.Layout.Documents[doc]
	if frame := cdp.FrameID(snapshot.StringAt(proc.Layout.Strings, d.FrameID)); ref.Frame == "" && doc != 0 || ref.Frame != "" && ref.Frame != frame {
		return "", fmt.Errorf("the ref says frame %q, the element is in document %d of frame %q", ref.Frame, doc, frame)
	}
	out := tag + " in " + snapshot.StringAt(proc.Layout.Strings, d.DocumentURL)
	if ref.OOPIF == "" {
		if len(ref.Hosts) > 0 {
			return "", fmt.Errorf("an element of the tab's process with %d iframes on the way to it", len(ref.Hosts))
		}
		return out, nil
	}
	var hosts []string
	for _, h := range ref.Hosts {
		hp := process(c, h.OOPIF)
		if hp == nil || hp.Layout == nil {
			return "", fmt.Errorf("no capture of the process %q of an iframe on the way", h.OOPIF)
		}
		tag, _, err := find(hp.Layout, h.Node)
		if err != nil {
			return "", fmt.Errorf("an iframe on the way: %w", err)
		}
		if h.Nested {
			tag += " nested"
		}
		hosts = append(hosts, tag)
	}
	return out + " (out of process, through " + strings.Join(hosts, ", ") + ")", nil
}

// process is the capture of the process target names in c ("": c's own).
func process(c *snapshot.Capture, target target.ID) *snapshot.Capture {
	if c.Target == target {
		return c
	}
	for _, f := range c.Frames {
		if p := process(f, target); p != nil {
			return p
		}
	}
	return nil
}

// find is the tag of node in layout and the index of its document.
func find(layout *domsnapshot.CaptureSnapshotResult, node cdp.BackendNodeID) (tag string, doc int, err error) {
	for di, d := range layout.Documents {
		if i := slices.Index(d.Nodes.BackendNodeID, node); i >= 0 {
			return snapshot.StringAt(layout.Strings, d.Nodes.NodeName[i]), di, nil
		}
	}
	return "", 0, fmt.Errorf("node %d is in no document of its process", node)
}
