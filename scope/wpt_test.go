package scope_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// wptCase is one case of testdata/wpt-urltestdata-hosts.json, extracted by
// internal/wptgen from web-platform-tests' url/resources/urltestdata.json
// (BSD-3-Clause; the file names its source, commit and licence).
type wptCase struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Failure  bool    `json:"failure"`
	Hostname string  `json:"hostname"`
	Port     string  `json:"port"`
}

// wptStricter are the WPT cases where ParseURL deliberately refuses a URL
// that WHATWG URL (and Chromium) accept. Refusing is the fail-closed side:
// browsergate denies what it cannot judge simply. Each is named with why.
var wptStricter = map[string]string{
	"http://./":       "empty labels: a host of only dots names nothing that resolves, and empty labels would complicate glob matching",
	"http://../":      "empty labels: a host of only dots names nothing that resolves",
	"http://foo.09..": "empty labels: \"foo.09.\" plus an empty label; ErrInvalidLabel",
}

// TestWPTHosts holds ParseURL to the WHATWG URL test data for every kept
// case: where WPT expects failure, ParseURL must fail; where WPT expects a
// URL, ParseURL must produce the same hostname (without the one trailing
// dot that browsergate's canonical hosts drop) and the same port.
//
// Deliberately not tested (internal/wptgen counts them in the file's
// "skipped" object): relative references and inputs that WHATWG resolves
// against their base (browsergate has no base: a URL argument must be
// absolute), file: URLs and non-special schemes (kept opaque by ParseURL
// and refused by Check).
func TestWPTHosts(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "wpt-urltestdata-hosts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []wptCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 300 {
		t.Fatalf("only %d WPT cases: is the file complete?", len(file.Cases))
	}
	for i, c := range file.Cases {
		t.Run(strings.ToValidUTF8(c.Input, "?"), func(t *testing.T) {
			t.Parallel()
			u, err := scope.ParseURL(c.Input)
			if why, ok := wptStricter[c.Input]; ok {
				if err == nil {
					t.Errorf("case %d: ParseURL(%q) succeeded, but it is listed as deliberately refused (%s)", i, c.Input, why)
				}
				return
			}
			if c.Failure {
				if err == nil {
					t.Errorf("case %d: ParseURL(%q) = %q (host %q), WPT expects failure", i, c.Input, u, u.Host)
				}
				return
			}
			if err != nil {
				t.Errorf("case %d: ParseURL(%q): %v; WPT expects hostname %q", i, c.Input, err, c.Hostname)
				return
			}
			want := c.Hostname
			if !strings.HasPrefix(want, "[") {
				want = strings.TrimSuffix(want, ".")
			}
			if u.Host != want || u.Port != c.Port {
				t.Errorf("case %d: ParseURL(%q) host %q port %q, WPT expects %q port %q", i, c.Input, u.Host, u.Port, c.Hostname, c.Port)
			}
		})
	}
}
