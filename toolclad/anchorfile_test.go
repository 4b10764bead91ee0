package toolclad_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/toolclad"
)

func TestAnchorFile(t *testing.T) {
	a, err := toolclad.ParseAnchor("/etc/browsergate/anchor.toml", []byte(`
dir = "log"
key_file = "/keys/fleet-log.key"

[copy]
endpoint = "http://127.0.0.1:7070"
bucket = "fleet-evidence"
prefix = "fleet-log/"
retention_days = 365
path_style = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir != filepath.FromSlash("/etc/browsergate/log") || a.KeyFile != "/keys/fleet-log.key" ||
		a.Copy == nil || a.Copy.Bucket != "fleet-evidence" || a.Copy.Retention != 365*24*time.Hour || !a.Copy.PathStyle {
		t.Fatalf("parsed %+v %+v", a, a.Copy)
	}
}

// TestAnchorFileCleansDir: a dir written with a trailing slash or dots is
// the directory itself, absolute or relative (a restore builds
// DIR.restoring beside it, not inside it).
func TestAnchorFileCleansDir(t *testing.T) {
	for doc, want := range map[string]string{
		"dir = \"/x/log/\"":       "/x/log",
		"dir = \"/x/./log//\"":    "/x/log",
		"dir = \"log/\"":          "/etc/browsergate/log",
		"dir = \"../fleet/log/\"": "/etc/fleet/log",
	} {
		a, err := toolclad.ParseAnchor("/etc/browsergate/anchor.toml", []byte(doc+"\nkey_file = \"k\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if a.Dir != filepath.FromSlash(want) {
			t.Errorf("%s: dir %q, want %q", doc, a.Dir, want)
		}
	}
}

func TestAnchorFileDurations(t *testing.T) {
	a, err := toolclad.ParseAnchor("anchor.toml", []byte("dir = \"log\"\nkey_file = \"k\"\ncheckpoint_interval = \"250ms\"\nanchor_every = \"2s\"\nround_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.CheckpointInterval != 250*time.Millisecond || a.AnchorEvery != 2*time.Second {
		t.Fatalf("checkpoint_interval %v, anchor_every %v; want 250ms and 2s", a.CheckpointInterval, a.AnchorEvery)
	}
	if a.RoundTimeout != 5*time.Second {
		t.Fatalf("round_timeout %v, want 5s", a.RoundTimeout)
	}
	if a, err = toolclad.ParseAnchor("anchor.toml", []byte("dir = \"log\"\nkey_file = \"k\"\n")); err != nil || a.CheckpointInterval != 0 || a.AnchorEvery != 0 {
		t.Fatalf("no durations: %+v, %v; want zero (the defaults)", a, err)
	}
}

func TestAnchorFileProblems(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`key_file = "k"`, "neither dir nor [copy]"},
		{`dir = "log"`, "neither key_file"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"", "missing retention_days"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nretention_days = 1", "missing bucket"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"\nretention_days = 0", "between 1 and 36500"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"\nretention_days = 1\nprefix = \"p\"", "a prefix ends with /"},
		{"dir = \"log\"\nkeyfile = \"k\"", "unknown key"},
		{"dir = \"log\"\nkey_file = \"k\"\ncheckpoint_interval = \"50ms\"", "50ms is less than 100ms"},
		{"dir = \"log\"\nkey_file = \"k\"\ncheckpoint_interval = 1", "expected a string"},
		{"dir = \"log\"\nkey_file = \"k\"\nanchor_every = \"soon\"", `"soon" is not a duration`},
		{"dir = \"log\"\nkey_file = \"k\"\nanchor_every = \"0s\"", "0s is less than 10ms"},
		{"dir = \"log\"\nkey_file = \"k\"\ncheckpoint_interval = \"61s\"", "1m1s is more than 1m0s"},
		{"dir = \"log\"\nkey_file = \"k\"\nanchor_every = \"87600h\"", "87600h0m0s is more than 1m0s"},
		{"dir = \"log\"\nkey_file = \"k\"\nround_timeout = \"11m\"", "11m0s is more than 10m0s"},
		{"dir = \"log\"\nkey_file = \"k\"\nround_timeout = \"500ms\"", "500ms is less than 1s"},
		{"dir = \"log\"\nkey_file = \"k\"\ncheckpoint_interval = \"2s\"\nround_timeout = \"3s\"", "3s is less than twice checkpoint_interval (2s)"},
	} {
		_, err := toolclad.ParseAnchor("anchor.toml", []byte(tc.doc))
		var le *toolclad.LoadError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "anchor.toml:") {
			t.Errorf("%q: %v, want a problem at a position saying %q", tc.doc, err, tc.want)
		}
	}
}
