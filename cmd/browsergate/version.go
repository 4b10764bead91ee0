package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is browsergate's version, reported by `browsergate version` and
// to MCP clients.
const version = "0.1.0"

var versionCommand = &command{
	name:    "version",
	summary: "Print browsergate's version (also `browsergate --version`), the Go version it was built with, and the source revision when the build recorded one.",
	setup: func(*flag.FlagSet) action {
		return func(_ []string, stdout, _ io.Writer) error {
			info, _ := debug.ReadBuildInfo()
			fmt.Fprint(stdout, versionText(info))
			return nil
		}
	},
}

// versionText is the output of `browsergate version`: the version, then
// what the build info holds (nil: nothing more).
func versionText(info *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "browsergate %s\n", version)
	if info == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "built with %s for %s/%s\n", info.GoVersion, runtime.GOOS, runtime.GOARCH)
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := vcs["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if vcs["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	} else {
		// go run, -buildvcs=false and a build outside a git checkout
		// record no revision: say so, rather than leave the reader to
		// wonder why the line is missing.
		b.WriteString("revision unknown (built without VCS information)\n")
	}
	return b.String()
}
