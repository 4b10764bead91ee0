package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionSaysWhenTheRevisionIsUnknown: a binary whose build recorded
// no revision (go run, -buildvcs=false) says so instead of leaving the
// line out.
func TestVersionSaysWhenTheRevisionIsUnknown(t *testing.T) {
	t.Parallel()
	got := versionText(&debug.BuildInfo{GoVersion: "go1.99.0"})
	if !strings.HasSuffix(got, "\nrevision unknown (built without VCS information)\n") {
		t.Errorf("versionText without VCS settings = %q", got)
	}
	stamped := versionText(&debug.BuildInfo{GoVersion: "go1.99.0", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}}})
	if strings.Contains(stamped, "unknown") || !strings.HasSuffix(stamped, "\nrevision 0123abcd\n") {
		t.Errorf("versionText with a revision = %q", stamped)
	}
}
