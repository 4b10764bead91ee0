package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// listed is what `go list -json` says of a package, the fields we read.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	DepOnly    bool
	ImportMap  map[string]string
	Error      *struct{ Err string }
}

// load lists the packages the patterns name, with their dependencies'
// export data (which `go list -export` builds, or finds in the build
// cache), type-checks each from its source, and returns their graphs.
// Reading dependencies from export data rather than from source keeps it
// fast: executor imports all of cdproto.
func load(patterns []string) ([]*graph, error) {
	args := append([]string{"list", "-e", "-export", "-deps",
		"-json=ImportPath,Dir,GoFiles,CgoFiles,Export,DepOnly,ImportMap,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	var targets []listed
	exports := make(map[string]string)
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var graphs []*graph
	for _, p := range targets {
		g, err := check(fset, gc, p)
		if err != nil {
			return nil, err
		}
		graphs = append(graphs, g)
	}
	slices.SortFunc(graphs, func(a, b *graph) int { return strings.Compare(a.path, b.path) })
	return graphs, nil
}

// importMap resolves an import as written in the source to the package
// `go list` resolved it to (they differ under vendoring).
type importMap struct {
	types.Importer
	paths map[string]string
}

func (m importMap) Import(path string) (*types.Package, error) {
	if resolved, ok := m.paths[path]; ok {
		path = resolved
	}
	return m.Importer.Import(path)
}

// check type-checks one package from its files and records which file
// uses which other file's names.
func check(fset *token.FileSet, gc types.Importer, p listed) (*graph, error) {
	names := append(append([]string{}, p.GoFiles...), p.CgoFiles...)
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{
		Uses:       make(map[*ast.Ident]types.Object),
		Selections: make(map[*ast.SelectorExpr]*types.Selection),
	}
	conf := types.Config{Importer: importMap{gc, p.ImportMap}, FakeImportC: true}
	pkg, err := conf.Check(p.ImportPath, fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %v", p.ImportPath, err)
	}

	g := newGraph(p.ImportPath, names)
	owners := fieldOwners(pkg)
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	record := func(at token.Pos, obj types.Object) {
		if obj.Pkg() != pkg {
			return
		}
		if name, ok := declared(pkg, obj, owners); ok {
			g.use(fileOf(at), fileOf(obj.Pos()), name)
		}
	}
	for id, obj := range info.Uses {
		record(id.Pos(), obj)
	}
	// x.f where f is promoted through embedded fields: x.f also uses the
	// embedded fields on the way, which Uses does not show.
	for sel, s := range info.Selections {
		t := s.Recv()
		for _, i := range s.Index()[:len(s.Index())-1] {
			st, ok := deref(t).Underlying().(*types.Struct)
			if !ok {
				break
			}
			record(sel.Sel.Pos(), st.Field(i))
			t = st.Field(i).Type()
		}
	}
	return g, nil
}

// declared reports whether obj is a name that ties files together — a
// package-level object, a method, or a field — and how to print it:
// a method or field as Type.name.
func declared(pkg *types.Package, obj types.Object, owners map[*types.Var]string) (string, bool) {
	switch obj := obj.(type) {
	case *types.Func:
		recv := obj.Origin().Signature().Recv()
		if recv == nil {
			return obj.Name(), obj.Parent() == pkg.Scope()
		}
		if named, ok := deref(recv.Type()).(*types.Named); ok {
			return named.Obj().Name() + "." + obj.Name(), true
		}
		return obj.Name(), true
	case *types.Var:
		if obj.IsField() {
			if owner, ok := owners[obj.Origin()]; ok {
				return owner + "." + obj.Name(), true
			}
			return obj.Name(), true
		}
	}
	return obj.Name(), obj.Parent() == pkg.Scope()
}

// fieldOwners maps the fields of the package's named struct types to the
// type's name, for printing.
func fieldOwners(pkg *types.Package) map[*types.Var]string {
	owners := make(map[*types.Var]string)
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				owners[st.Field(i)] = name
			}
		}
	}
	return owners
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}
