package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestHelpAboutHelpIsTheTopUsage: help asked about itself (`help help`,
// `help -h`, `help --help`, `-h help`) prints the top-level usage and
// exits 0; these once recursed until the stack overflowed.
func TestHelpAboutHelpIsTheTopUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"help", "help"}, {"help", "-h"}, {"help", "--help"}, {"-h", "help"}, {"--help", "-h"}, {"help", "help", "help"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code != 0 || stdout.String() != topUsage() || stderr.Len() != 0 {
			t.Errorf("browsergate %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), code, stderr.String(), stdout.String())
		}
	}
}

// TestVersionFlag: `browsergate --version` prints what `browsergate
// version` prints.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	if code := run([]string{"version"}, &want, io.Discard); code != 0 {
		t.Fatalf("browsergate version: exit %d", code)
	}
	for _, flag := range []string{"--version", "-version"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{flag}, &stdout, &stderr); code != 0 || stdout.String() != want.String() {
			t.Errorf("browsergate %s: exit %d, stderr %q, stdout %q; want %q", flag, code, stderr.String(), stdout.String(), want.String())
		}
	}
	if !strings.Contains(topUsage(), "--version") {
		t.Errorf("the top-level usage does not mention --version:\n%s", topUsage())
	}
}
