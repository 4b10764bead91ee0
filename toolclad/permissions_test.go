package toolclad_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// permissionsManifest is the smallest manifest with a scope of two origins
// and the given [browser] keys and [browser.permissions] body.
func permissionsManifest(browser, perms string) string {
	return "[tool]\nname = \"p\"\n\n[browser]\n" + browser + "\n\n[browser.scope]\n" +
		"allowed_domains = [\"maps.example.test\", \"127.0.0.1\"]\nallow_private_cidrs = [\"127.0.0.1/32\"]\n\n" +
		"[browser.permissions]\n" + perms + "\n\n[browser.commands.navigate]\n"
}

// TestPermissionGrantsLoad proves that a grant as docs/manifest.md writes
// it loads to its canonical origins, that a manifest without the table
// grants nothing, and that Granted answers by exact origin.
func TestPermissionGrantsLoad(t *testing.T) {
	t.Parallel()
	m, err := toolclad.Parse("grants.toml", []byte(permissionsManifest("",
		`geolocation = ["https://maps.example.test", "http://127.0.0.1:8080/"]`+"\n"+`clipboard-read = ["http://127.0.0.1:8080"]`)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := toolclad.Permissions{
		"geolocation":    {"https://maps.example.test", "http://127.0.0.1:8080"},
		"clipboard-read": {"http://127.0.0.1:8080"},
	}
	if got := m.Browser.Permissions; len(got) != len(want) || !slices.Equal(got["geolocation"], want["geolocation"]) || !slices.Equal(got["clipboard-read"], want["clipboard-read"]) {
		t.Errorf("Permissions = %v, want %v", got, want)
	}
	p := m.Browser.Permissions
	for _, c := range []struct {
		perm, origin string
		granted      bool
	}{
		{"geolocation", "https://maps.example.test", true},
		{"geolocation", "http://maps.example.test", false}, // another scheme is another origin
		{"geolocation", "http://127.0.0.1:8080", true},
		{"geolocation", "http://127.0.0.1:8081", false},
		{"notifications", "http://127.0.0.1:8080", false},
		{"clipboard-write", "http://127.0.0.1:8080", false}, // read is not write
	} {
		if got := p.Granted(c.perm, c.origin); got != c.granted {
			t.Errorf("Granted(%q, %q) = %v, want %v", c.perm, c.origin, got, c.granted)
		}
	}

	none, err := toolclad.Parse("none.toml", []byte("[tool]\nname = \"p\"\n\n[browser.scope]\nallowed_domains = [\"maps.example.test\"]\n\n[browser.commands.navigate]\n"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if none.Browser.Permissions != nil || none.Browser.Permissions.Granted("geolocation", "https://maps.example.test") {
		t.Errorf("a manifest without [browser.permissions] grants %v", none.Browser.Permissions)
	}
}

// TestPermissionProblems proves that each wrong grant is a load problem at
// its own key or entry, saying what is wrong and what to write: an unknown
// permission (listing the known ones), an origin outside the scope, a URL
// that is not an origin, another scheme, a grant in the user's own
// context or on the browserless engine.
func TestPermissionProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		browser string
		perms   string
		key     string
		want    []string
	}{
		{
			name:  "unknown permission lists the known ones and the nearest",
			perms: `geolocaton = ["https://maps.example.test"]`,
			key:   "browser.permissions.geolocaton",
			want:  []string{`unknown permission "geolocaton"`, `did you mean "geolocation"`, "known: accelerometer, ", "notifications", "window-management"},
		},
		{
			name:  "a prefix names both clipboard permissions",
			perms: `clipboard = ["https://maps.example.test"]`,
			key:   "browser.permissions.clipboard",
			want:  []string{`"clipboard-read" or "clipboard-write"`},
		},
		{
			name:  "origin outside the scope",
			perms: `geolocation = ["https://maps.example.test", "https://evil.example.test"]`,
			key:   "browser.permissions.geolocation[1]",
			want:  []string{`origin "https://evil.example.test" is outside [browser.scope]`, "evil.example.test"},
		},
		{
			name:  "a URL with a path is not an origin",
			perms: `camera = ["https://maps.example.test/meet"]`,
			key:   "browser.permissions.camera[0]",
			want:  []string{"not an origin as the browser writes it", `write "https://maps.example.test"`},
		},
		{
			name:  "uppercase and a default port are written canonically",
			perms: `camera = ["HTTPS://Maps.Example.Test:443"]`,
			key:   "browser.permissions.camera[0]",
			want:  []string{`write "https://maps.example.test"`},
		},
		{
			name:  "another scheme",
			perms: `microphone = ["wss://maps.example.test"]`,
			key:   "browser.permissions.microphone[0]",
			want:  []string{"not an http or https origin"},
		},
		{
			name:  "not a URL",
			perms: `microphone = ["maps.example.test"]`,
			key:   "browser.permissions.microphone[0]",
			want:  []string{`"maps.example.test" is not an origin`},
		},
		{
			name:  "an origin listed twice",
			perms: `geolocation = ["https://maps.example.test", "https://maps.example.test/"]`,
			key:   "browser.permissions.geolocation[1]",
			want:  []string{"listed twice"},
		},
		{
			name:  "an empty grant",
			perms: `geolocation = []`,
			key:   "browser.permissions.geolocation",
			want:  []string{"grants geolocation to no origin"},
		},
		{
			name:  "not an array",
			perms: `geolocation = "https://maps.example.test"`,
			key:   "browser.permissions.geolocation",
			want:  []string{"expected an array of strings"},
		},
		{
			name:    "a grant in the user's own context",
			browser: `connect = "live"`,
			perms:   `geolocation = ["https://maps.example.test"]`,
			key:     "browser.permissions",
			want:    []string{`context = "user" shares the user's site settings`, `use context = "isolated"`},
		},
		{
			name:    "the browserless engine has no pages",
			browser: `engine = "http"`,
			perms:   `geolocation = ["https://maps.example.test"]`,
			key:     "browser.permissions",
			want:    []string{`engine = "http" runs no pages`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := permissionsManifest(tt.browser, tt.perms)
			if strings.Contains(tt.browser, "http") {
				doc = strings.Replace(doc, "[browser.commands.navigate]", "[browser.commands.fetch_page]", 1)
			}
			_, err := toolclad.Parse("perms.toml", []byte(doc))
			var le *toolclad.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a *LoadError", err)
			}
			var found *toolclad.Problem
			for i, p := range le.Problems {
				if p.Key == tt.key {
					found = &le.Problems[i]
				} else if strings.HasPrefix(p.Key, "browser.permissions") {
					t.Errorf("another problem in the table: %s", p)
				}
			}
			if found == nil {
				t.Fatalf("no problem at %s; problems: %v", tt.key, le.Problems)
			}
			for _, w := range tt.want {
				if !strings.Contains(found.Message, w) {
					t.Errorf("problem %q does not say %q", found.Message, w)
				}
			}
			if found.Line < 2 {
				t.Errorf("problem at line %d, want the line of the grant", found.Line)
			}
		})
	}
}

// TestPermissionNamesAreKnownOnce proves the list a problem message gives
// has no name twice and is sorted, so that a reader finds a name in it.
func TestPermissionNamesAreKnownOnce(t *testing.T) {
	t.Parallel()
	if !slices.IsSorted(toolclad.PermissionNames) || len(slices.Compact(slices.Clone(toolclad.PermissionNames))) != len(toolclad.PermissionNames) {
		t.Errorf("PermissionNames are not sorted and unique: %v", toolclad.PermissionNames)
	}
}
