package main

import (
	"os/exec"
	"testing"

	"github.com/browsergate/browsergate/examples/quickstart"
)

// findRef returns the ref on the first snapshot line containing text.
var findRef = quickstart.FindRef

// resultText is the text of a tool result.
var resultText = quickstart.ResultText

// serveOn serves h on addr and returns its base URL.
var serveOn = quickstart.ServeOn

// startUntilCleanup starts cmd, and kills it when the test ends, logging
// what it wrote (log, under the name what) if the test failed.
func startUntilCleanup(t testing.TB, cmd *exec.Cmd, what string, log *syncBuffer) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s:\n%s", what, log.String())
		}
	})
}
