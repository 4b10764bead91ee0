package toolclad_test

import (
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestScopeSummary: the scope an agent is told names the allowed host
// patterns, the schemes the URL arguments accept, the ports, the private
// grants and the blocked domains, and nothing of the domain sets.
func TestScopeSummary(t *testing.T) {
	m, err := toolclad.Parse("m.toml", []byte(`
[tool]
name = "docs"
[browser.scope]
allowed_domains = ["*.example.com", "example.com"]
blocked_domains = ["admin.example.com"]
allowed_ports = [443, "8000-8999"]
allow_private_cidrs = ["10.1.2.0/24 ports 8080"]
domain_sets.internal = ["intranet.example.com"]
[browser.commands.navigate]
args.url = { type = "url", schemes = ["https"], scope_check = true }
[browser.commands.snapshot]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.ScopeSummary()
	want := "Scope: sites: *.example.com, example.com (https); on ports 443, 8000-8999; private addresses granted: 10.1.2.0/24 ports 8080; never: admin.example.com."
	if got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
	ins := toolclad.Instructions([]*toolclad.Manifest{m}, "_")
	if !strings.Contains(ins, "Tools docs_*: "+want) || strings.Contains(ins, "intranet") {
		t.Errorf("instructions do not carry the summary, or name a domain set:\n%s", ins)
	}
}
