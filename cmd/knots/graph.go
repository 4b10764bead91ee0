package main

import (
	"slices"
	"sort"
)

// A graph is one package's files and, for each file, the names it uses
// from each other file.
type graph struct {
	path  string
	files []string // base names, sorted
	// uses[a][b] holds the names file a uses that are declared in
	// file b, sorted; a file b is a key only when a uses something of it.
	uses map[string]map[string][]string
}

func newGraph(path string, files []string) *graph {
	return &graph{path: path, files: slices.Sorted(slices.Values(files)), uses: make(map[string]map[string][]string)}
}

// use records that file a uses name, declared in file b.
func (g *graph) use(a, b, name string) {
	if a == b {
		return
	}
	if g.uses[a] == nil {
		g.uses[a] = make(map[string][]string)
	}
	names := g.uses[a][b]
	if i, found := slices.BinarySearch(names, name); !found {
		g.uses[a][b] = slices.Insert(names, i, name)
	}
}

// drop takes files out of the graph with every edge to or from them.
func (g *graph) drop(files []string) {
	for _, f := range files {
		g.files = slices.DeleteFunc(g.files, func(x string) bool { return x == f })
		delete(g.uses, f)
		for _, out := range g.uses {
			delete(out, f)
		}
	}
}

// knots returns the strongly connected components of more than one file,
// largest first (then by their first file), each sorted by name. It is
// Tarjan's algorithm: a file whose depth-first search cannot climb back
// above itself is the root of a component, which is what is left on the
// stack above it.
func (g *graph) knots() [][]string {
	index := make(map[string]int) // order of discovery, from 1
	low := make(map[string]int)   // the lowest index reachable back through the stack
	onStack := make(map[string]bool)
	var stack []string
	var knots [][]string
	var visit func(a string)
	visit = func(a string) {
		index[a] = len(index) + 1
		low[a] = index[a]
		stack = append(stack, a)
		onStack[a] = true
		for _, b := range g.next(a) {
			if index[b] == 0 {
				visit(b)
				low[a] = min(low[a], low[b])
			} else if onStack[b] {
				low[a] = min(low[a], index[b])
			}
		}
		if low[a] != index[a] {
			return
		}
		i := slices.Index(stack, a)
		component := slices.Clone(stack[i:])
		for _, f := range component {
			onStack[f] = false
		}
		stack = stack[:i]
		if len(component) > 1 {
			sort.Strings(component)
			knots = append(knots, component)
		}
	}
	for _, f := range g.files {
		if index[f] == 0 {
			visit(f)
		}
	}
	sort.Slice(knots, func(i, j int) bool {
		if len(knots[i]) != len(knots[j]) {
			return len(knots[i]) > len(knots[j])
		}
		return knots[i][0] < knots[j][0]
	})
	return knots
}

// next returns the files a uses, sorted, so the search is deterministic.
func (g *graph) next(a string) []string {
	out := make([]string, 0, len(g.uses[a]))
	for b := range g.uses[a] {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}
