package main

import (
	"bytes"
	"flag"
	"io"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// flagsOf declares c's flags on a fresh flag set, as run does.
func flagsOf(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.setup(fs)
	return fs
}

var flagNameRE = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// TestUsageNamesEveryFlag: the synopsis of every command, which the
// top-level usage is made of, names every flag the command has and no
// flag it does not have, so that the usage cannot drift from the flags.
func TestUsageNamesEveryFlag(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var has, named []string
			flagsOf(c).VisitAll(func(f *flag.Flag) { has = append(has, f.Name) })
			for _, m := range flagNameRE.FindAllStringSubmatch(c.synopsis, -1) {
				if !slices.Contains(named, m[1]) {
					named = append(named, m[1])
				}
			}
			for _, n := range named {
				if !slices.Contains(has, n) {
					t.Errorf("the usage names --%s, which %s does not have", n, c.name)
				}
			}
			for _, n := range has {
				if !slices.Contains(named, n) {
					t.Errorf("%s has --%s, which its usage does not name", c.name, n)
				}
			}
			if c.summary == "" {
				t.Errorf("%s has no summary", c.name)
			}
		})
	}
}

// TestHelpForEveryCommand: -h and --help print that command's usage, every
// flag with its description and default, to stdout, and exit 0.
func TestHelpForEveryCommand(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		for _, h := range []string{"-h", "--help"} {
			t.Run(c.name+" "+h, func(t *testing.T) {
				t.Parallel()
				var stdout, stderr bytes.Buffer
				args := append(strings.Fields(c.name), h)
				if code := run(args, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
					t.Fatalf("browsergate %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr.String())
				}
				out := stdout.String()
				if !strings.HasPrefix(out, "usage: browsergate "+c.name) {
					t.Fatalf("browsergate %s does not start with its own usage:\n%s", strings.Join(args, " "), out)
				}
				flagsOf(c).VisitAll(func(f *flag.Flag) {
					_, usage := flag.UnquoteUsage(f)
					if !strings.Contains(out, "\n  --"+f.Name) || !strings.Contains(out, usage) {
						t.Errorf("--%s or its description is missing:\n%s", f.Name, out)
					}
					if def := defaultText(f); def != "" && !strings.Contains(out, "(default "+def+")") {
						t.Errorf("the default of --%s (%s) is missing:\n%s", f.Name, def, out)
					}
				})
			})
		}
	}
}

// TestUnknownFlagSaysWhereTheFlagsAre: a flag the command does not have
// exits 2 with the reason on stderr and one line saying how to see the
// command's flags, not the whole flag reference, which would bury the
// reason.
func TestUnknownFlagSaysWhereTheFlagsAre(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			args := append(strings.Fields(c.name), "--no-such-flag")
			if code := run(args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing on stdout", code, stdout.String())
			}
			want := "browsergate: " + c.name + ": flag provided but not defined: -no-such-flag\nrun `browsergate help " + c.name + "` for its flags\n"
			if stderr.String() != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
			}
		})
	}
}

func TestTopLevelAndGroupUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want []string // every command whose name starts with one of these appears
	}{
		{nil, 2, []string{""}},
		{[]string{"-h"}, 0, []string{""}},
		{[]string{"--help"}, 0, []string{""}},
		{[]string{"help"}, 0, []string{""}},
		{[]string{"frobnicate"}, 2, []string{""}},
		{[]string{"evidence"}, 2, []string{"evidence "}},
		{[]string{"evidence", "-h"}, 0, []string{"evidence "}},
		{[]string{"help", "evidence"}, 0, []string{"evidence "}},
		{[]string{"evidence", "frobnicate"}, 2, []string{"evidence "}},
		{[]string{"approvals", "--help"}, 0, []string{"approvals "}},
		{[]string{"policy"}, 2, []string{"policy "}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		out := stdout.String()
		if tc.code != 0 {
			out = stderr.String()
		}
		if code != tc.code || !strings.HasPrefix(out, "usage:") && !strings.HasPrefix(out, "browsergate: ") {
			t.Errorf("browsergate %q: exit %d, want %d\n%s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
			continue
		}
		for _, c := range commands {
			if strings.HasPrefix(c.name, tc.want[0]) && !strings.Contains(out, "browsergate "+c.name+" ") && !strings.Contains(out, "browsergate "+c.name+"\n") {
				t.Errorf("browsergate %q does not list %s:\n%s", tc.args, c.name, out)
			}
		}
	}
	// help COMMAND is COMMAND -h.
	var a, b bytes.Buffer
	if run([]string{"help", "evidence", "prune"}, &a, io.Discard) != 0 || run([]string{"evidence", "prune", "-h"}, &b, io.Discard) != 0 || a.String() != b.String() {
		t.Errorf("help evidence prune:\n%s\nevidence prune -h:\n%s", a.String(), b.String())
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		max        int
		positional []string
		note       string
		err        bool
	}{
		{[]string{"--note", "x"}, 0, nil, "x", false},
		{[]string{"apr-1", "--note", "x"}, 1, []string{"apr-1"}, "x", false},
		{[]string{"--note", "x", "apr-1"}, 1, []string{"apr-1"}, "x", false},
		{[]string{"--", "-apr"}, 1, []string{"-apr"}, "", false},
		{[]string{"apr-1", "apr-2"}, 1, nil, "", true},
		{[]string{"apr-1"}, 0, nil, "", true},
		{[]string{"--nope"}, 1, nil, "", true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		note := fs.String("note", "", "")
		got, err := parseFlags(fs, tc.args, tc.max)
		if (err != nil) != tc.err || !tc.err && (!slices.Equal(got, tc.positional) || *note != tc.note) {
			t.Errorf("parseFlags(%q, %d) = %q, note %q, %v", tc.args, tc.max, got, *note, err)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	if code := run([]string{"version"}, &stdout, io.Discard); code != 0 || !strings.HasPrefix(stdout.String(), "browsergate "+version+"\n") {
		t.Fatalf("browsergate version: exit %d\n%s", code, stdout.String())
	}
	if !strings.Contains(stdout.String(), runtime.Version()) {
		t.Errorf("browsergate version does not name the Go version %s:\n%s", runtime.Version(), stdout.String())
	}
	info := &debug.BuildInfo{GoVersion: "go1.99.0", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-22T08:21:40Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	want := "browsergate " + version + "\nbuilt with go1.99.0 for " + runtime.GOOS + "/" + runtime.GOARCH +
		"\nrevision 0123abcd (2026-11-22T08:21:40Z), with uncommitted changes\n"
	if got := versionText(info); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	if got := versionText(nil); got != "browsergate "+version+"\n" {
		t.Errorf("versionText(nil) = %q", got)
	}
}

// TestReleaseBinaryHasNoDemo: the demo site and its scripted agent are
// linked only with the demo build tag.
func TestReleaseBinaryHasNoDemo(t *testing.T) {
	t.Parallel()
	demo := []string{"github.com/browsergate/browsergate/examples/demosite", "github.com/browsergate/browsergate/examples/quickstart"}
	for _, tags := range []string{"", "demo"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-deps", ".").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		deps := strings.Fields(string(out))
		for _, pkg := range demo {
			if linked := slices.Contains(deps, pkg); linked != (tags == "demo") {
				t.Errorf("go list -tags %q -deps ./cmd/browsergate: %s linked = %v", tags, pkg, linked)
			}
		}
	}
	// The binary TestMain built, as `go build` does, says how to get it.
	if out, code := runBinary(t, "demo"); code != 1 || !strings.Contains(out, "go run -tags demo ./cmd/browsergate demo") {
		t.Errorf("demo in a binary built without it: exit %d\n%s", code, out)
	}
}

// TestOperatorTokenFileHelpSaysWhatTheTokensDo: serve's help for
// --operator-token-file says every use of an operator's token over HTTP:
// the event stream, and the console's sign-in, where held calls are
// answered.
func TestOperatorTokenFileHelpSaysWhatTheTokensDo(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help", "serve"}, &stdout, &stderr); code != 0 {
		t.Fatalf("help serve: exit %d\n%s", code, stderr.String())
	}
	_, help, _ := strings.Cut(stdout.String(), "\n  --operator-token-file FILE\n")
	help, _, _ = strings.Cut(help, "\n  --")
	for _, want := range []string{"watch /events", "sign in to the console", "answer held calls"} {
		if !strings.Contains(help, want) {
			t.Errorf("--operator-token-file's help does not say %q:\n%s", want, help)
		}
	}
}
