package snapshot_test

import (
	"flag"
	"testing"

	"github.com/browsergate/browsergate/executor/snapshot/snapshottest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the saved captures")

// TestRenderGolden renders each capture saved in testdata (pages Chromium
// read: the demo site's and the executor tests' own) and compares the
// text and its refs with the capture's golden, byte for byte. -update
// rewrites the goldens; the executor's TestSnapshotCaptures takes the
// captures again.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	names, err := snapshottest.Names("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no capture in testdata")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := snapshottest.Read("testdata", name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := snapshottest.Golden(c)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := snapshottest.WriteGolden("testdata", name, got); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := snapshottest.ReadGolden("testdata", name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := snapshottest.Diff(want, got); diff != "" {
				t.Errorf("%s renders otherwise than %s (-update rewrites it):\n%s", name+snapshottest.CaptureSuffix, name+snapshottest.GoldenSuffix, diff)
			}
		})
	}
}
