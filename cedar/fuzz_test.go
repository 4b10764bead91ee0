package cedar_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/browsergate/browsergate/cedar"
)

// FuzzLoad feeds random policy text to LoadDir: it must return an engine or
// an error, never panic, and any engine it returns must decide without
// panicking.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"navigate.cedar", "submit.cedar", "execute_js.cedar", "baseline.cedar", "risk.cedar"} {
		b, err := os.ReadFile(filepath.Join(shippedDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`permit (principal, action, resource) when { resource.x == };`)
	f.Add(`@id("a") @id("b") forbid (principal, action, resource) when { 1 + "a" } unless { ip("x").isLoopback() };`)
	f.Add(`permit (principal in Web::Agent::"a", action in [Web::Action::"browse"], resource is Web::BrowserSession) when { resource.args has url && resource.args.url like "*\x00*" };`)
	schema, err := os.ReadFile(shippedSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.cedar"), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "browsergate.cedarschema"), schema, 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := cedar.LoadDir(dir)
		if err != nil {
			if e != nil {
				t.Fatal("engine returned with an error")
			}
			return
		}
		d := e.Decide(baseRequest("submit_form"))
		if d.Allowed && len(d.Errors) > 0 {
			t.Fatalf("allowed with errors: %+v", d)
		}
		if d.NeedsApproval && (d.Allowed || len(d.Errors) > 0) {
			t.Fatalf("needs approval on an allowed or failed decision: %+v", d)
		}
		if len(d.Reasons) == 0 {
			t.Fatalf("decision without a reason: %+v", d)
		}
	})
}

// FuzzDecide feeds random request values to the shipped policies: Decide
// must never panic, never allow with errors, and always give a reason.
func FuzzDecide(f *testing.F) {
	f.Add("navigate", "docs.example.com", "allowed", "url", "https://x/", int64(0), false, true)
	f.Add("submit_form", "", "", "selector", "#f", int64(5), true, true)
	f.Add("execute_js", "x.evil.com", "blocked", "human_approved", "1", int64(-1), false, false)
	f.Add("", "\x00", "\xff", "", "", int64(1<<62), true, false)
	e := loadShipped(f)
	f.Fuzz(func(t *testing.T, command, domain, set, argKey, argVal string, n int64, approved, authed bool) {
		r := baseRequest(command)
		r.URLDomain = domain
		r.DomainSets = []string{set}
		r.Args = map[string]any{argKey: argVal, argKey + "_n": n, argKey + "_f": float64(n) / 3}
		r.HumanApproved = approved
		r.PageState["is_authenticated"] = authed
		r.Counters["session_submit_count"] = int(n)
		r.Counters[argKey] = int(n)
		d := e.Decide(r)
		if d.Allowed && len(d.Errors) > 0 {
			t.Fatalf("allowed with errors: %+v", d)
		}
		if len(d.Reasons) == 0 {
			t.Fatalf("decision without a reason: %+v", d)
		}
		if command == "execute_js" && !approved && d.Allowed {
			t.Fatalf("execute_js allowed without approval: %+v", d)
		}
		if command == "submit_form" && n >= 5 && argKey != "session_submit_count" && d.Allowed {
			t.Fatalf("sixth submit allowed: %+v", d)
		}
	})
}
