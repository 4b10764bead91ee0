package snapshot_test

import (
	"testing"

	"github.com/browsergate/browsergate/executor/snapshot"
	"github.com/browsergate/browsergate/executor/snapshot/snapshottest"
)

// BenchmarkRender renders each saved capture: the rendering alone, with
// no browser, of what the executor's BenchmarkSnapshotLongPage measures
// as its render sub-benchmark on the Go specification (the capture
// go-spec is of the same page).
func BenchmarkRender(b *testing.B) {
	names, err := snapshottest.Names("testdata")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range names {
		c, err := snapshottest.Read("testdata", name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := snapshot.Render(c, snapshot.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
