// Command knots measures how tangled a package's files are: the knots of
// files that all reach each other through the names they use.
//
// It counts like this. A package's files are the non-test .go files that
// `go list` gives for this GOOS and GOARCH (build tags applied, so a
// platform's file counts only on that platform; generated files count like
// any other). The package is type-checked with go/types against its
// dependencies' export data. File A has an edge to file B (A ≠ B) when an
// identifier in A resolves, in types.Info.Uses, to an object of the package
// declared in B: a package-level name, a method, or a struct field; the
// embedded fields a promoted selection goes through (types.Info.Selections)
// count too. Locals never cross files, and names of other packages and
// what nothing names (an interface satisfied implicitly) make no edge.
// A knot is a strongly connected component of that graph with more than
// one file: every file in it reaches every other.
//
// Usage:
//
//	go run ./cmd/knots [-why] [-max N] [-drop a.go,b.go] packages...
//
// The packages are directories or import patterns, as `go list` takes
// them, resolved in the current module. For each package it prints the
// number of files and each knot with its size and members, largest first.
// -why prints, for the largest knot, the names each file uses from each
// other file of the knot, so one can see what ties it. -drop leaves files
// out of the graph, edges and all, to predict the knot after they move
// to another package. -max N makes it exit 1 when a knot is larger than N;
// it exits 2 when a package cannot be loaded.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run does what main does and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("knots", flag.ContinueOnError)
	flags.SetOutput(stderr)
	why := flags.Bool("why", false, "for the largest knot, print the names each file uses from each other file in it")
	limit := flags.Int("max", -1, "exit 1 when a knot has more than `N` files (negative: no limit)")
	drop := flags.String("drop", "", "comma-separated file names to leave out of the graph")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: knots [-why] [-max N] [-drop a.go,b.go] packages...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return 2
	}
	graphs, err := load(flags.Args())
	if err != nil {
		fmt.Fprintln(stderr, "knots:", err)
		return 2
	}
	largest := 0
	for _, g := range graphs {
		if *drop != "" {
			g.drop(strings.Split(*drop, ","))
		}
		knots := g.knots()
		report(stdout, g, knots, *why)
		if len(knots) > 0 && len(knots[0]) > largest {
			largest = len(knots[0])
		}
	}
	if *limit >= 0 && largest > *limit {
		fmt.Fprintf(stderr, "knots: a knot of %d files is larger than %d\n", largest, *limit)
		return 1
	}
	return 0
}

// report prints a package's file count and its knots, and with why the
// names that tie its largest knot together.
func report(w io.Writer, g *graph, knots [][]string, why bool) {
	sizes := make([]string, len(knots))
	for i, k := range knots {
		sizes[i] = fmt.Sprint(len(k))
	}
	if len(knots) == 0 {
		fmt.Fprintf(w, "%s: %s, no knots\n", g.path, files(len(g.files)))
		return
	}
	fmt.Fprintf(w, "%s: %s, knots of %s\n", g.path, files(len(g.files)), strings.Join(sizes, ", "))
	for _, k := range knots {
		fmt.Fprintf(w, "  %d: %s\n", len(k), strings.Join(k, " "))
	}
	if !why {
		return
	}
	in := make(map[string]bool)
	for _, f := range knots[0] {
		in[f] = true
	}
	fmt.Fprintf(w, "  what ties the knot of %d (file → file it uses: names):\n", len(knots[0]))
	for _, a := range knots[0] {
		var out []string
		for b := range g.uses[a] {
			if in[b] {
				out = append(out, b)
			}
		}
		sort.Strings(out)
		usedBy := 0
		for _, b := range knots[0] {
			if _, ok := g.uses[b][a]; ok {
				usedBy++
			}
		}
		fmt.Fprintf(w, "    %s uses %d of the knot's files, is used by %d\n", a, len(out), usedBy)
		for _, b := range out {
			fmt.Fprintf(w, "      → %s: %s\n", b, strings.Join(g.uses[a][b], ", "))
		}
	}
}

func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
