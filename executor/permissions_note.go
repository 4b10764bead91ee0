package executor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// splitPermissions parts what the guard refused into the requests
// (interception, proxy) and the permissions a page asked for and was
// refused (layer "permission"), which the agent is told about apart: a
// permission refused is no request the egress gate blocked.
func splitPermissions(all []Blocked) (requests, permissions []Blocked) {
	for _, b := range all {
		if b.Layer == permissionLayer {
			permissions = append(permissions, b)
		} else {
			requests = append(requests, b)
		}
	}
	return requests, permissions
}

// permissionsNote tells the agent which permissions the session's pages
// asked for and were refused without a prompt, by page, each named once:
// "[permissions refused without a prompt: notifications, camera (page
// http://…/perm.html)]". Nothing when there were none.
func permissionsNote(refused []Blocked) string {
	if len(refused) == 0 {
		return ""
	}
	var pages []string
	names := map[string][]string{}
	for _, b := range refused {
		name := permissionName(b.Rule)
		if _, ok := names[b.URL]; !ok {
			pages = append(pages, b.URL)
		}
		if !slices.Contains(names[b.URL], name) {
			names[b.URL] = append(names[b.URL], name)
		}
	}
	var parts []string
	for _, page := range pages {
		// The names and the page's URL are what the page chose: inert,
		// so that neither can close the note or spell a marker.
		parts = append(parts, fmt.Sprintf("%s (page %s)", inert(strings.Join(names[page], ", ")), inert(page)))
	}
	return "\n[permissions refused without a prompt: " + strings.Join(parts, "; ") + "]"
}

// permissionName is the permission a refusal's rule names (`permissions
// "camera"`), or the rule as it is when it names none.
func permissionName(rule string) string {
	if name, err := strconv.Unquote(strings.TrimPrefix(rule, "permissions ")); err == nil {
		return name
	}
	return rule
}
