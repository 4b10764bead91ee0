package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const ring = "./testdata/ring"

func loadOne(t *testing.T, pattern string) *graph {
	t.Helper()
	graphs, err := load([]string{pattern})
	if err != nil {
		t.Fatal(err)
	}
	if len(graphs) != 1 {
		t.Fatalf("load(%q) = %d packages, want 1", pattern, len(graphs))
	}
	return graphs[0]
}

// The fixture's edges are exactly the names each file uses from another:
// a promoted field (and the embedded field it goes through), a method
// declared apart from its type, package-level names; nothing from the
// test file or the file its build constraint leaves out.
func TestEdgesOfFixture(t *testing.T) {
	t.Parallel()
	g := loadOne(t, ring)
	wantFiles := []string{"a.go", "b.go", "c.go", "d.go", "doc.go", "e.go", "f.go", "g.go"}
	if !reflect.DeepEqual(g.files, wantFiles) {
		t.Errorf("files = %v, want %v", g.files, wantFiles)
	}
	want := map[string]map[string][]string{
		"a.go": {"b.go": {"Inner.Level"}, "c.go": {"Outer", "Outer.Inner"}},
		"b.go": {"c.go": {"Clock.Tick"}, "d.go": {"Clock"}},
		"c.go": {"a.go": {"start"}, "b.go": {"Inner"}, "d.go": {"Clock"}},
		"e.go": {"a.go": {"start"}, "c.go": {"Outer"}},
		"f.go": {"g.go": {"pong"}},
		"g.go": {"f.go": {"ping"}},
	}
	if !reflect.DeepEqual(g.uses, want) {
		t.Errorf("uses = %v,\nwant %v", g.uses, want)
	}
}

func TestKnotsOfFixture(t *testing.T) {
	t.Parallel()
	g := loadOne(t, ring)
	want := [][]string{{"a.go", "b.go", "c.go"}, {"f.go", "g.go"}}
	if got := g.knots(); !reflect.DeepEqual(got, want) {
		t.Errorf("knots = %v, want %v", got, want)
	}
	// Without the method's file the ring is open.
	g.drop([]string{"c.go"})
	want = [][]string{{"f.go", "g.go"}}
	if got := g.knots(); !reflect.DeepEqual(got, want) {
		t.Errorf("knots without c.go = %v, want %v", got, want)
	}
}

func TestMaxSetsExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no limit", []string{ring}, 0},
		{"largest knot within", []string{"-max", "3", ring}, 0},
		{"largest knot over", []string{"-max", "2", ring}, 1},
		{"over until a file is dropped", []string{"-max", "2", "-drop", "b.go", ring}, 0},
		{"no package", []string{"-max", "2"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.want, &stderr)
			}
		})
	}
}

func TestWhyNamesWhatTiesTheLargestKnot(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-why", ring}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	for _, line := range []string{
		"ring: 8 files, knots of 3, 2\n",
		"  3: a.go b.go c.go\n",
		"    b.go uses 1 of the knot's files, is used by 2\n",
		"      → c.go: Clock.Tick\n",
	} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, &stdout)
		}
	}
	if strings.Contains(stdout.String(), "f.go uses") {
		t.Errorf("-why explains a knot other than the largest:\n%s", &stdout)
	}
}

// Over the whole module, every knot is what the command says it is: its
// files all reach each other, and no file outside it is both reached
// from it and reaches it.
func TestKnotsOfThisModuleAreStronglyConnected(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	t.Parallel()
	graphs, err := load([]string{"../../..."})
	if err != nil {
		t.Fatal(err)
	}
	var executor *graph
	for _, g := range graphs {
		if filepath.Base(g.path) == "executor" {
			executor = g
		}
		in := make(map[string]int) // file → its knot's number, from 1
		for i, knot := range g.knots() {
			for _, f := range knot {
				if in[f] != 0 {
					t.Errorf("%s: %s is in two knots", g.path, f)
				}
				in[f] = i + 1
			}
		}
		reach := make(map[string]map[string]bool)
		for _, f := range g.files {
			reach[f] = g.reach(f)
		}
		for _, a := range g.files {
			for _, b := range g.files {
				together := reach[a][b] && reach[b][a]
				if same := in[a] != 0 && in[a] == in[b]; a != b && together != same {
					t.Errorf("%s: %s and %s reach each other: %v; in one knot: %v", g.path, a, b, together, same)
				}
			}
		}
	}
	if executor == nil || len(executor.files) == 0 {
		t.Fatal("no executor package among the module's")
	}
}

// reach returns the files a reaches through one edge or more.
func (g *graph) reach(a string) map[string]bool {
	seen := make(map[string]bool)
	todo := []string{a}
	for len(todo) > 0 {
		f := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, b := range g.next(f) {
			if !seen[b] {
				seen[b] = true
				todo = append(todo, b)
			}
		}
	}
	return seen
}
