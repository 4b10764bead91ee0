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

func TestAnchorFileProblems(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`key_file = "k"`, "neither dir nor [copy]"},
		{`dir = "log"`, "neither key_file"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"", "missing retention_days"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nretention_days = 1", "missing bucket"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"\nretention_days = 0", "between 1 and 36500"},
		{"dir = \"log\"\nkey_file = \"k\"\n[copy]\nbucket = \"b\"\nretention_days = 1\nprefix = \"p\"", "a prefix ends with /"},
		{"dir = \"log\"\nkeyfile = \"k\"", "unknown key"},
	} {
		_, err := toolclad.ParseAnchor("anchor.toml", []byte(tc.doc))
		var le *toolclad.LoadError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "anchor.toml:") {
			t.Errorf("%q: %v, want a problem at a position saying %q", tc.doc, err, tc.want)
		}
	}
}
