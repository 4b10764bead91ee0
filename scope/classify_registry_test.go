package scope_test

import (
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/internal/iana"
)

// registryRows reads the same CSVs that classify_gen.go is generated from.
func registryRows(t *testing.T) []iana.Row {
	t.Helper()
	dir := filepath.Join("internal", "ianagen", "testdata")
	var rows []iana.Row
	for _, f := range []struct {
		name   string
		family int
	}{
		{"iana-ipv4-special-registry-1.csv", 4},
		{"iana-ipv6-special-registry-1.csv", 6},
		{"supplement.csv", 0},
	} {
		r, err := iana.ReadFile(filepath.Join(dir, f.name), f.family)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	return rows
}

// mostSpecific is the registry row that decides a, by longest prefix.
func mostSpecific(rows []iana.Row, a netip.Addr) (iana.Row, bool) {
	var best iana.Row
	found := false
	for _, r := range rows {
		if r.Prefix.Contains(a) && (!found || r.Prefix.Bits() > best.Prefix.Bits()) {
			best, found = r, true
		}
	}
	return best, found
}

// metadata are the hand-listed cloud metadata addresses (scope/metadata.go).
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true,
	netip.MustParseAddr("169.254.170.2"):   true,
	netip.MustParseAddr("fd00:ec2::254"):   true,
	netip.MustParseAddr("100.100.100.200"): true,
	netip.MustParseAddr("192.0.0.192"):     true,
}

// registryGlobal is what the registries say about a, without unwrapping:
// the most specific row's flag, global when no row lists it.
func registryGlobal(rows []iana.Row, a netip.Addr) bool {
	if metadata[a] {
		return false
	}
	r, ok := mostSpecific(rows, a)
	return !ok || r.Global()
}

// TestClassifyRegistryEdges checks the first and the last address of every
// row of the IANA registries (and the supplement) against the rows
// themselves: a plain address gets the class and reachability of the most
// specific row holding it; an address that embeds IPv4 is global only when
// the embedded address is global and, except for IPv4-mapped addresses,
// the embedding's own row is too.
func TestClassifyRegistryEdges(t *testing.T) {
	t.Parallel()
	rows := registryRows(t)
	if len(rows) < 50 {
		t.Fatalf("only %d registry rows: are the CSVs complete?", len(rows))
	}
	for _, r := range rows {
		for _, a := range []netip.Addr{r.Prefix.Addr(), lastAddr(r.Prefix)} {
			t.Run(r.Prefix.String()+"/"+a.String(), func(t *testing.T) {
				t.Parallel()
				c := scope.Classify(a)
				inner, via := scope.Unwrap(a)
				want := registryGlobal(rows, inner)
				if via != "" && via != "ipv4-mapped" {
					want = want && registryGlobal(rows, a)
				}
				if c.Global != want {
					t.Errorf("Classify(%s) = %+v, want global=%v (row %s %q)", a, c, want, r.Prefix, r.Name)
				}
				if via != "" {
					return
				}
				best, _ := mostSpecific(rows, a)
				if c.Name != best.Class() || c.Prefix != best.Prefix || c.Ref != best.Ref {
					t.Errorf("Classify(%s) = %+v, want class %q from row %s (%s)", a, c, best.Class(), best.Prefix, best.Ref)
				}
			})
		}
	}
}

// TestClassifyEveryRowReachability checks, for each row, one address that
// the row itself decides (its first address, or the address just after a
// more specific row inside it), so that every row's Globally Reachable flag
// is seen through Classify at least once.
func TestClassifyEveryRowReachability(t *testing.T) {
	t.Parallel()
	rows := registryRows(t)
	for _, r := range rows {
		t.Run(r.Prefix.String(), func(t *testing.T) {
			t.Parallel()
			candidates := []netip.Addr{r.Prefix.Addr()}
			for _, o := range rows {
				if o.Prefix.Bits() > r.Prefix.Bits() && r.Prefix.Contains(o.Prefix.Addr()) {
					candidates = append(candidates, lastAddr(o.Prefix).Next())
				}
			}
			var a netip.Addr
			for _, c := range candidates {
				if best, _ := mostSpecific(rows, c); best.Prefix == r.Prefix {
					a = c
					break
				}
			}
			if !a.IsValid() {
				t.Fatalf("found no address that %s decides", r.Prefix)
			}
			if _, via := scope.Unwrap(a); via != "" {
				// The embedding rows: covered by TestClassifyUnwrap.
				return
			}
			if c := scope.Classify(a); c.Global != r.Global() || c.Name != r.Class() {
				t.Errorf("Classify(%s) = %+v, want %q global=%v from %s", a, c, r.Class(), r.Global(), r.Prefix)
			}
		})
	}
}
