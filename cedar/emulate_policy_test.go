package cedar_test

import (
	"slices"
	"testing"
)

// TestPoliciesCanNarrowEmulate: Cedar sees emulate's arguments, so an
// operator's policy can forbid what the shipped ones allow: any emulated
// position, or a CPU throttle above 4. The policy validates against the
// shipped schema (args.geolocation a String, args.cpu a Long), and each
// forbid holds only for the calls it names.
func TestPoliciesCanNarrowEmulate(t *testing.T) {
	t.Parallel()
	e := loadFiles(t, map[string]string{
		"baseline.cedar": `@id("permit-all") permit (principal, action, resource);`,
		"emulate.cedar": `@id("no-emulated-position")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "emulate" && resource.args has geolocation };
@id("cpu-throttle-at-most-4")
forbid (principal, action == Web::Action::"browse", resource)
when { resource.command == "emulate" && resource.args has cpu && resource.args.cpu > 4 };`,
	})
	tests := []struct {
		name    string
		args    map[string]any
		allowed bool
		ids     []string
	}{
		{"a device", map[string]any{"device": "pixel-7"}, true, []string{"permit-all"}},
		{"a position", map[string]any{"geolocation": "52.52,13.405"}, false, []string{"no-emulated-position"}},
		{"cpu 4", map[string]any{"cpu": 4, "network": "slow-3g"}, true, []string{"permit-all"}},
		{"cpu 6", map[string]any{"cpu": 6}, false, []string{"cpu-throttle-at-most-4"}},
		{"cpu 20 and a position", map[string]any{"cpu": 20, "geolocation": "0,0"}, false, []string{"cpu-throttle-at-most-4", "no-emulated-position"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRequest("emulate")
			r.Args = tc.args
			d := e.Decide(r)
			if d.Allowed != tc.allowed || len(d.Errors) != 0 {
				t.Fatalf("Allowed = %v (errors %q), want %v; reasons %q", d.Allowed, d.Errors, tc.allowed, d.Reasons)
			}
			got := slices.Clone(d.PolicyIDs)
			slices.Sort(got)
			if !slices.Equal(got, tc.ids) {
				t.Errorf("PolicyIDs = %q, want %q", got, tc.ids)
			}
			if err := e.ValidateRequest(r); err != nil {
				t.Errorf("the request does not fit the shipped schema: %v", err)
			}
		})
	}
}
