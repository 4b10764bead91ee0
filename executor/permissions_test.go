package executor

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestPermissionAskedRecordsWhatIsNotGranted proves what a page's report
// of a permission request becomes: a refused request of layer
// "permission" for each permission its origin is not granted, nothing for
// a granted one or a name browsergate does not know, the frame's URL as
// the browser reported it rather than as the page's script says, and no
// grant for a report from a frame the guard does not know.
func TestPermissionAskedRecordsWhatIsNotGranted(t *testing.T) {
	t.Parallel()
	grants := toolclad.Permissions{"geolocation": {"https://maps.example.test"}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name    string
		payload string
		pageURL string // as the browser reported it ("" when unknown)
		want    []string
	}{
		{"not granted", "notifications https://maps.example.test/x", "", []string{`permissions "notifications" https://maps.example.test/x`}},
		{"granted to the origin", "geolocation https://maps.example.test/x", "https://maps.example.test/x", nil},
		{"granted to another origin", "geolocation http://maps.example.test/x", "http://maps.example.test/x", []string{`permissions "geolocation" http://maps.example.test/x`}},
		{"an unknown frame that claims a granted origin", "geolocation https://maps.example.test/x", "", []string{`permissions "geolocation" https://maps.example.test/x`}},
		{"a frame of another origin in a granted page", "geolocation https://maps.example.test/", "https://ads.example.test/frame",
			[]string{`permissions "geolocation" https://ads.example.test/frame`}},
		{"two permissions at once", "camera,microphone https://maps.example.test/", "", []string{
			`permissions "camera" https://maps.example.test/`, `permissions "microphone" https://maps.example.test/`}},
		{"the browser's URL counts, not the page's claim", "geolocation https://maps.example.test/", "https://evil.example.test/",
			[]string{`permissions "geolocation" https://evil.example.test/`}},
		{"a name browsergate does not know", "rootkit https://maps.example.test/", "", nil},
		{"a device chooser", "hid,usb https://maps.example.test/", "", []string{
			`permissions "hid" https://maps.example.test/`, `permissions "usb" https://maps.example.test/`}},
		{"a page of no web origin", "geolocation about:blank", "", []string{`permissions "geolocation" about:blank`}},
		{"no URL at all", "geolocation", "", []string{`permissions "geolocation" `}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l blockLog
			permissionAsked(&l, grants, quiet, tt.payload, tt.pageURL)
			got, _ := l.takeAll()
			var lines []string
			for _, b := range got {
				if b.Layer != permissionLayer || !strings.Contains(b.Reason, "denied without a prompt") {
					t.Errorf("record %+v: want layer %q and a reason that says it was denied without a prompt", b, permissionLayer)
				}
				lines = append(lines, b.Rule+" "+b.URL)
			}
			if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("recorded %q, want %q", lines, tt.want)
			}
		})
	}
}

// TestPermissionReportIsBounded proves a page cannot make one report of
// any size: what is recorded of it is cut at maxPermissionReport.
func TestPermissionReportIsBounded(t *testing.T) {
	t.Parallel()
	var l blockLog
	permissionAsked(&l, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), "geolocation https://a.test/"+strings.Repeat("x", 1<<20), "")
	got, _ := l.takeAll()
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
