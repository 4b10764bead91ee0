package toolclad_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// seleniumManifest is a Grid's pool: url, credentials_file (%s) and
// pool_cidrs.
const seleniumManifest = `[tool]
name = "grid"

[browser]
connect = "remote"

[browser.remote]
provider = "selenium"
url = %q
%s
pool_cidrs = ["10.0.5.0/24"]

[browser.commands.navigate]
`

// TestLoadSelenium: a Selenium Grid's manifest loads with its url, an
// address in pool_cidrs, and a credentials file only its owner reads
// (mode 600: git keeps no such mode, so the file is made here); a url
// outside the pool, one that names the Grid by a name or carries its
// credentials, and a credentials file others can read are each refused at
// their place.
func TestLoadSelenium(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	creds := filepath.Join(dir, "grid-credentials")
	if err := os.WriteFile(creds, []byte("gate:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open-credentials")
	if err := os.WriteFile(open, []byte("gate:pw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, url, extra string) string {
		p := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(p, fmt.Appendf(nil, seleniumManifest, url, extra), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("loads", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, write("good", "http://10.0.5.2:4444", `credentials_file = "grid-credentials"`))
		r := m.Browser.Remote
		if r == nil || r.Provider != toolclad.ProviderSelenium || r.URL != "http://10.0.5.2:4444" || r.CredentialsFile != creds ||
			len(r.Endpoints) != 0 || fmt.Sprint(r.PoolCIDRs) != "[10.0.5.0/24]" {
			t.Errorf("remote = %+v", r)
		}
		if r := mustLoad(t, write("plain", "https://10.0.5.2:4443/grid", "")).Browser.Remote; r.URL != "https://10.0.5.2:4443/grid" || r.CredentialsFile != "" {
			t.Errorf("remote without credentials = %+v", r)
		}
	})
	for _, tc := range []struct{ name, url, extra, want string }{
		{"outside the pool", "http://10.0.6.2:4444", "", "10.0.6.2 is outside pool_cidrs"},
		{"a name", "http://grid.internal:4444", "", "host grid.internal is a name"},
		{"credentials in the url", "http://gate:pw@10.0.5.2:4444", "", "carries credentials in the URL"},
		{"a websocket url", "ws://10.0.5.2:4444", "", `scheme "ws" is not one of "http", "https"`},
		{"credentials others read", "http://10.0.5.2:4444", `credentials_file = "open-credentials"`, "can be read by other users (mode 0644): chmod 600 it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := toolclad.Load(write(strings.ReplaceAll(tc.name, " ", "-"), tc.url, tc.extra))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
