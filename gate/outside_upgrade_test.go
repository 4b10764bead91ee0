package gate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope"
)

// An approval of http://H on the default port opens https://H on its
// default port too, where Chromium's own upgrade takes the navigate; no
// other origin is opened by it.
func TestAdmittedOriginsAddTheHTTPSUpgradeOfDefaultPortHTTP(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"http://example.com/", []string{"http://example.com:80", "https://example.com:443"}},
		{"http://example.com:8080/", []string{"http://example.com:8080"}},
		{"https://example.com/", []string{"https://example.com:443"}},
		{"https://example.com:8443/", []string{"https://example.com:8443"}},
		// Chromium upgrades no IP address: its http origin stays alone.
		{"http://8.8.8.8/", []string{"http://8.8.8.8:80"}},
		{"http://[2001:4860:4860::8888]/", []string{"http://[2001:4860:4860::8888]:80"}},
	} {
		o, err := scope.OriginOf(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range AdmittedOrigins(o) {
			got = append(got, a.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AdmittedOrigins(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// Once http://H was approved, the session's check lifts a refusal of
// https://H (the upgrade) and of nothing else: not another port, and not
// another host.
func TestApprovedHTTPOriginLiftsItsHTTPSUpgradeOnly(t *testing.T) {
	o, _ := scope.OriginOf("http://example.com/")
	var admitted OutsideOrigins
	for _, a := range AdmittedOrigins(o) {
		admitted.Add(a, "ap-1")
	}
	askable := func(u string) scope.Verdict {
		origin, err := scope.OriginOf(u)
		if err != nil {
			return scope.Verdict{}
		}
		return scope.Verdict{Ask: true, Host: origin.Host, Port: origin.Port, URL: u}
	}
	check := admitted.Check(askable)
	for u, want := range map[string]bool{
		"http://example.com/a":       true,
		"https://example.com/a":      true,
		"https://example.com:8443/a": false,
		"https://other.example.org/": false,
		"https://www.example.com/":   false,
	} {
		if got := check(u).Allowed; got != want {
			t.Errorf("check(%s).Allowed = %v, want %v", u, got, want)
		}
	}
}

// The hold message tells the operator that an approval of http://H opens
// its https upgrade too.
func TestHoldOfDefaultPortHTTPNamesItsUpgrade(t *testing.T) {
	o, _ := scope.OriginOf("http://example.com/")
	got := originsPhrase(AdmittedOrigins(o))
	if !strings.Contains(got, "http://example.com:80 (and its https upgrade https://example.com:443) are") {
		t.Errorf("originsPhrase = %q", got)
	}
}
