package executor

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/internal/testkit"
	"github.com/browsergate/browsergate/toolclad"
)

// TestPermissionAskedRecordsWhatIsNotGranted proves what a page's report
// of a permission request becomes: a refused request of layer
// "permission" for each permission its origin is not granted, a grant
// (never a refusal) for a granted one, with the frame's origin, nothing
// for a name browsergate does not know, the frame's URL as the browser
// reported it rather than as the page's script says, and no grant for a
// report from a frame the guard does not know.
func TestPermissionAskedRecordsWhatIsNotGranted(t *testing.T) {
	t.Parallel()
	grants := toolclad.Permissions{"geolocation": {"https://maps.example.test"}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		payload string
		pageURL string // as the browser reported it ("" when unknown)
		// unapplied: why the browser would not apply a grant to the frame
		unapplied string
		want      []string
		granted   []string // "permission origin url"
	}{
		{"not granted", "notifications https://maps.example.test/x", "", "", []string{`permissions "notifications" https://maps.example.test/x`}, nil},
		{"granted to the origin", "geolocation https://maps.example.test/x", "https://maps.example.test/x", "", nil,
			[]string{"geolocation https://maps.example.test https://maps.example.test/x"}},
		{"granted beside one that is not", "geolocation,camera https://maps.example.test/x", "https://maps.example.test/y", "",
			[]string{`permissions "camera" https://maps.example.test/y`}, []string{"geolocation https://maps.example.test https://maps.example.test/y"}},
		{"granted to another origin", "geolocation http://maps.example.test/x", "http://maps.example.test/x", "", []string{`permissions "geolocation" http://maps.example.test/x`}, nil},
		{"an unknown frame that claims a granted origin", "geolocation https://maps.example.test/x", "", "", []string{`permissions "geolocation" https://maps.example.test/x`}, nil},
		{"a frame of another origin in a granted page", "geolocation https://maps.example.test/", "https://ads.example.test/frame", "",
			[]string{`permissions "geolocation" https://ads.example.test/frame`}, nil},
		{"two permissions at once", "camera,microphone https://maps.example.test/", "", "", []string{
			`permissions "camera" https://maps.example.test/`, `permissions "microphone" https://maps.example.test/`}, nil},
		{"the browser's URL counts, not the page's claim", "geolocation https://maps.example.test/", "https://evil.example.test/", "",
			[]string{`permissions "geolocation" https://evil.example.test/`}, nil},
		{"a name browsergate does not know", "rootkit https://maps.example.test/", "", "", nil, nil},
		{"a device chooser", "hid,usb https://maps.example.test/", "", "", []string{
			`permissions "hid" https://maps.example.test/`, `permissions "usb" https://maps.example.test/`}, nil},
		{"a page of no web origin", "geolocation about:blank", "", "", []string{`permissions "geolocation" about:blank`}, nil},
		{"no URL at all", "geolocation", "", "", []string{`permissions "geolocation" `}, nil},
		// A grant to the frame's origin that the browser does not apply
		// there (a frame embedded by another origin, a sandboxed
		// document) is what the page got: a refusal, never a grant.
		{"granted to the origin but not applied to the frame", "geolocation,camera https://maps.example.test/x", "https://maps.example.test/x",
			"this frame was embedded by https://ads.example.test", []string{`permissions "geolocation" https://maps.example.test/x`,
				`permissions "camera" https://maps.example.test/x`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l blockLog
			permissionAsked(&l, grants, quiet, tt.payload, askingFrame{URL: tt.pageURL, Unapplied: tt.unapplied})
			got, _, granted := l.takeAll()
			var lines []string
			for _, b := range got {
				if b.Layer != permissionLayer || !strings.Contains(b.Reason, "denied without a prompt") {
					t.Errorf("record %+v: want layer %q and a reason that says it was denied without a prompt", b, permissionLayer)
				}
				if tt.unapplied != "" && b.Rule == `permissions "geolocation"` && !strings.Contains(b.Reason, "grants it to https://maps.example.test, but "+tt.unapplied) {
					t.Errorf("the refusal of a grant the browser did not apply does not say why: %q", b.Reason)
				}
				lines = append(lines, b.Rule+" "+b.URL)
			}
			if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("recorded %q, want %q", lines, tt.want)
			}
			var grants []string
			for _, g := range granted.list {
				grants = append(grants, g.Permission+" "+g.Origin+" "+g.URL)
			}
			if strings.Join(grants, "\n") != strings.Join(tt.granted, "\n") || granted.dropped != 0 {
				t.Errorf("recorded as granted %q (%d more), want %q", grants, granted.dropped, tt.granted)
			}
		})
	}
}

// TestPermissionReportIsBounded proves a page cannot make one report of
// any size: what is recorded of it is cut at maxPermissionReport.
func TestPermissionReportIsBounded(t *testing.T) {
	t.Parallel()
	var l blockLog
	permissionAsked(&l, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), "geolocation https://a.test/"+strings.Repeat("x", 1<<20), askingFrame{})
	got, _, _ := l.takeAll()
	if len(got) != 1 {
		t.Fatalf("recorded %d request(s), want 1", len(got))
	}
	if len(got[0].URL) > maxPermissionReport {
		t.Errorf("recorded a URL of %d bytes, want at most %d", len(got[0].URL), maxPermissionReport)
	}
}

// TestPermissionsPolicyDeniesEveryFeature proves the header a document
// gets in the user's context allows each feature to no origin, in the
// Permissions-Policy syntax (a structured dictionary of empty lists).
func TestPermissionsPolicyDeniesEveryFeature(t *testing.T) {
	t.Parallel()
	entries := strings.Split(permissionsPolicy, ", ")
	if len(entries) != len(permissionsPolicyFeatures) {
		t.Fatalf("%d entries for %d features: %q", len(entries), len(permissionsPolicyFeatures), permissionsPolicy)
	}
	for i, e := range entries {
		if e != permissionsPolicyFeatures[i]+"=()" {
			t.Errorf("entry %q, want %q", e, permissionsPolicyFeatures[i]+"=()")
		}
	}
	for _, f := range []string{"camera", "microphone", "geolocation", "clipboard-read", "clipboard-write"} {
		if !strings.Contains(permissionsPolicy, f+"=()") {
			t.Errorf("the policy does not turn %s off", f)
		}
	}
}

// TestPermissionsScriptIsFilledIn proves the page script gets the binding
// and the mode: no placeholder is left, and only the user's context
// denies from the page.
func TestPermissionsScriptIsFilledIn(t *testing.T) {
	t.Parallel()
	for _, deny := range []bool{false, true} {
		s := permissionsScript(deny)
		if strings.Contains(s, "DENY") || strings.Contains(s, "BINDING") {
			t.Errorf("deny=%v: a placeholder is left in the script", deny)
		}
		if !strings.Contains(s, `globalThis["`+permissionBinding+`"]`) {
			t.Errorf("deny=%v: the script does not take the binding %q", deny, permissionBinding)
		}
		if want := "const deny = " + map[bool]string{false: "false", true: "true"}[deny] + ";"; !strings.Contains(s, want) {
			t.Errorf("deny=%v: the script does not say %q", deny, want)
		}
	}
}

// TestPermissionDescriptors proves the descriptors Chromium wants a
// member for get it, and the others none.
func TestPermissionDescriptors(t *testing.T) {
	t.Parallel()
	if d := permissionDescriptor("push"); !d.UserVisibleOnly {
		t.Errorf("push: %+v, want userVisibleOnly", d)
	}
	if d := permissionDescriptor("fullscreen"); !d.AllowWithoutGesture {
		t.Errorf("fullscreen: %+v, want allowWithoutGesture", d)
	}
	if d := permissionDescriptor("geolocation"); d.Name != "geolocation" || d.UserVisibleOnly || d.AllowWithoutGesture || d.Sysex {
		t.Errorf("geolocation: %+v, want the name alone", d)
	}
}

// TestMaskTurnMasksGrantedRequests: a granted request's URL (a page's
// own, which may carry a secret in its query) is masked in the record as
// a refused request's is, and masking makes a new list, so that the
// agent's copy of a turn and the record's share none of it.
func TestMaskTurnMasksGrantedRequests(t *testing.T) {
	t.Parallel()
	const value = "xSECRETx99"
	m := mask.FromManifests([]*toolclad.Manifest{testkit.SecretManifest(t, value)})
	raw := "https://maps.example.test/?k=" + value
	tr := &turn{granted: permissionGrants{list: []permissionGrant{{URL: raw, Permission: "geolocation", Origin: "https://maps.example.test"}}}}
	agentCopy := *tr
	maskTurn(tr, maskAllWith(m, true))
	if got := tr.granted.list[0].URL; got != "https://maps.example.test/?k=[secret PW]" {
		t.Errorf("granted URL in the record = %q, want the secret masked", got)
	}
	if tr.granted.list[0].Origin != "https://maps.example.test" || tr.granted.list[0].Permission != "geolocation" {
		t.Errorf("grant = %+v, want its origin and permission as they were", tr.granted.list[0])
	}
	if agentCopy.granted.list[0].URL != raw {
		t.Errorf("masking the record's turn changed the other copy's grant: %q", agentCopy.granted.list[0].URL)
	}
}
