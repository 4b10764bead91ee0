package egress_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/browsergate/browsergate/scope/egress"
)

func TestStaticResolver(t *testing.T) {
	t.Parallel()
	name, addrs, err := egress.ParseHostMapping("App.Test.=127.0.0.1, ::1")
	if err != nil || name != "app.test" || len(addrs) != 2 {
		t.Fatalf("ParseHostMapping: %q %v %v", name, addrs, err)
	}
	for _, bad := range []string{"", "=1.2.3.4", "a.test", "a.test=", "a.test=not-an-ip"} {
		if _, _, err := egress.ParseHostMapping(bad); err == nil {
			t.Errorf("ParseHostMapping(%q) accepted", bad)
		}
	}
	r := &egress.StaticResolver{Hosts: map[string][]netip.Addr{name: addrs}}
	got, err := r.LookupNetIP(context.Background(), "ip", "APP.test.")
	if err != nil || len(got) != 2 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("lookup app.test: %v %v", got, err)
	}
	if _, err := r.LookupNetIP(context.Background(), "ip", "other.test"); err == nil {
		t.Fatal("a name outside the table resolved with no fallback")
	}
}
