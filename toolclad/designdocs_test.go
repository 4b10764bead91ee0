package toolclad_test

import (
	"path/filepath"
	"testing"
)

// TestDesignDocExamplesLoad proves that the design documents' own
// manifests (examples/design-docs) load, each with its commands; the
// end-to-end test TestDesignDocManifests reaches every one of them.
func TestDesignDocExamplesLoad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/design-docs/*.toml")
	if err != nil || len(files) < 5 {
		t.Fatalf("want the five design-document manifests, got %d (%v)", len(files), err)
	}
	for _, file := range files {
		if m := mustLoad(t, file); len(m.Commands) == 0 {
			t.Errorf("%s: no commands", file)
		}
	}
}
