package main

import (
	"flag"
	"io"
)

var demoCommand = &command{
	name:     "demo",
	synopsis: "[--evidence FILE] [--manifest FILE] [--policies DIR]",
	summary: "Run the quick start: a governed browsing session against the bundled demo site (127.0.0.1) with a canary\n" +
		"outside the scope (127.0.0.2), then the evidence timeline, verify and replay. Run it from the repository root.\n" +
		"The release binary is built without it: go run -tags demo ./cmd/browsergate demo (make demo).",
	setup: func(fs *flag.FlagSet) action {
		o := &demoOptions{}
		fs.StringVar(&o.evidence, "evidence", "demo-evidence.db", "bbolt evidence `FILE`")
		fs.StringVar(&o.manifest, "manifest", "examples/demo.toml", "the demo manifest `FILE`")
		fs.StringVar(&o.policies, "policies", "policies", "Cedar policy `DIR`")
		return func(_ []string, stdout, stderr io.Writer) error { return runDemo(o, stdout, stderr) }
	},
}

// demoOptions are the flags of `browsergate demo`.
type demoOptions struct {
	evidence, manifest, policies string
}
