package toolclad

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/scope"
)

// PermissionNames are the permissions a page can ask for that a
// [browser.permissions] table may grant: the names of the Permissions API
// (navigator.permissions.query), as Chromium 156's DevTools protocol takes
// them in Browser.setPermission. Every permission is denied to every page
// of a session unless the manifest grants it to the page's origin; the
// denial covers the permission types the browser knows that have no name
// here too (Browser.grantPermissions with none granted).
var PermissionNames = []string{
	"accelerometer", "ambient-light-sensor", "background-fetch", "background-sync",
	"camera", "captured-surface-control", "clipboard-read", "clipboard-write",
	"display-capture", "fullscreen", "geolocation", "gyroscope", "idle-detection",
	"keyboard-lock", "local-fonts", "local-network", "local-network-access",
	"loopback-network", "magnetometer", "microphone", "midi", "nfc", "notifications",
	"payment-handler", "periodic-background-sync", "persistent-storage", "pointer-lock",
	"push", "screen-wake-lock", "speaker-selection", "storage-access", "system-wake-lock",
	"top-level-storage-access", "web-app-installation", "window-management",
}

// Permissions is the [browser.permissions] table (browsergate extension):
// for each permission granted, the origins whose pages get it without a
// prompt. A permission not named, or an origin not listed, is denied
// without a prompt. The origins are canonical ("https://maps.example.test",
// "http://127.0.0.1:8080") and each is inside the manifest's scope.
type Permissions map[string][]string

// Granted reports whether the manifest grants permission to origin (as
// the browser serialises an origin: scheme, host, non-default port).
func (p Permissions) Granted(permission, origin string) bool {
	return slices.Contains(p[permission], origin)
}

// decodePermissions reads [browser.permissions]; it runs after the scope
// is compiled, since every origin granted must be inside it.
func decodePermissions(t *table, m *Manifest) {
	if len(t.m) == 0 {
		return
	}
	b := &m.Browser
	for k := range t.m {
		t.used[k] = true // judged below, or refused as a whole
	}
	switch {
	case b.Engine == EngineHTTP:
		t.r.errorf(t.path, "engine = \"http\" runs no pages, so none can ask for a permission: remove [browser.permissions]")
		return
	case b.Connect == "live" && b.Context == ContextUser:
		// A grant is an override of the browser context's site settings,
		// and the user's context is the user's: their own tabs on the
		// same origin would get it too.
		t.r.errorf(t.path, "a grant needs a browser context of the session's own, and context = \"user\" shares the user's site settings with their own tabs: use context = \"isolated\", or remove [browser.permissions] (every permission is then denied to the session's pages)")
		return
	}
	perms := Permissions{}
	for _, name := range slices.Sorted(maps.Keys(t.m)) {
		if !slices.Contains(PermissionNames, name) {
			t.r.errorf(t.at(name), "unknown permission %q%s (known: %s)", name, permissionHint(name), strings.Join(PermissionNames, ", "))
			continue
		}
		var origins []string
		if !t.strings(name, &origins) {
			continue
		}
		if len(origins) == 0 {
			t.r.errorf(t.at(name), "grants %s to no origin: list the origins whose pages may use it, or remove the key (it is denied either way)", name)
			continue
		}
		var good []string
		for i, o := range origins {
			canon, msg := grantOrigin(o, m.scope)
			switch {
			case msg != "":
				t.r.errorf(t.at(name).index(i), "%s", msg)
			case slices.Contains(good, canon):
				t.r.errorf(t.at(name).index(i), "origin %q is listed twice", o)
			default:
				good = append(good, canon)
			}
		}
		if len(good) == len(origins) {
			perms[name] = good
		}
	}
	if len(perms) > 0 {
		b.Permissions = perms
	}
}

// grantOrigin checks one origin of a grant: an http or https origin as the
// browser writes it (no path, query, fragment or user), inside the scope.
// It returns the origin, or why it is refused.
func grantOrigin(raw string, sc *scope.Scope) (string, string) {
	u, err := scope.ParseURL(raw)
	if err != nil {
		return "", fmt.Sprintf("%q is not an origin: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Sprintf("%q is not an http or https origin: a permission is granted to web pages only", raw)
	}
	origin := u.Scheme + "://" + u.Host
	if u.Port != "" {
		origin += ":" + u.Port
	}
	if strings.TrimSuffix(raw, "/") != origin {
		return "", fmt.Sprintf("%q is not an origin as the browser writes it (scheme, host and port only, in lowercase): write %q", raw, origin)
	}
	if sc == nil {
		return origin, "" // the scope has its own errors
	}
	if v := sc.Check(origin + "/"); !v.Allowed {
		return "", fmt.Sprintf("origin %q is outside [browser.scope], so no page of the session can have it: %s", raw, v.Reason)
	}
	return origin, ""
}

// permissionHint suggests the permissions a misspelt name may have meant:
// those within two edits of it, or that contain it ("clipboard").
func permissionHint(name string) string {
	var near []string
	for _, p := range PermissionNames {
		if strings.Contains(p, name) || editDistance(name, p) <= 2 {
			near = append(near, fmt.Sprintf("%q", p))
		}
	}
	if len(near) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}
