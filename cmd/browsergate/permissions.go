package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/browsergate/browsergate/toolclad"
)

// permissionsSummary says, for check, which permissions a browser
// manifest's pages may have and that every other one is denied without a
// prompt ("" for the browserless engine, which runs no pages).
func permissionsSummary(m *toolclad.Manifest) string {
	if m.Browser.Engine == toolclad.EngineHTTP {
		return ""
	}
	grants := m.Browser.Permissions
	if len(grants) == 0 {
		return "permissions: none granted; every one a page asks for is denied without a prompt, and recorded"
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(grants)) {
		parts = append(parts, name+" to "+strings.Join(grants[name], ", "))
	}
	return "permissions: " + strings.Join(parts, "; ") + "; every other one a page asks for is denied without a prompt, and recorded"
}
