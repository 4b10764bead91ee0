package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/scope/internal/iana"
)

// TestGeneratedFileIsCurrent regenerates classify_gen.go in memory from the
// CSVs in testdata and compares it with the checked-in file, so that an
// edit of either without the other fails. Fix with: go generate ./scope
func TestGeneratedFileIsCurrent(t *testing.T) {
	t.Parallel()
	files := []struct {
		name   string
		family int
	}{
		{"iana-ipv4-special-registry-1.csv", 4},
		{"iana-ipv6-special-registry-1.csv", 6},
		{"supplement.csv", 0},
	}
	var rows []iana.Row
	var sources []string
	for _, f := range files {
		r, err := iana.ReadFile(filepath.Join("testdata", f.name), f.family)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
		// The names as go generate passes them, from the scope directory.
		sources = append(sources, "internal/ianagen/testdata/"+f.name)
	}
	got, err := Generate(rows, sources)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "classify_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("scope/classify_gen.go is not what the registries in testdata generate; run go generate ./scope\ngenerated:\n%s", got)
	}
}

func TestGenerateRefusesDuplicates(t *testing.T) {
	t.Parallel()
	r, err := iana.ReadFile(filepath.Join("testdata", "supplement.csv"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(append(r, r[0]), nil); err == nil {
		t.Error("Generate accepted a block listed twice")
	}
}

func TestGenerateRefusesAllReachable(t *testing.T) {
	t.Parallel()
	r, err := iana.ReadFile(filepath.Join("testdata", "supplement.csv"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var reachable []iana.Row
	for _, row := range r {
		if row.Global() {
			reachable = append(reachable, row)
		}
	}
	if _, err := Generate(reachable, nil); err == nil {
		t.Error("Generate accepted registries with no non-global row")
	}
}
