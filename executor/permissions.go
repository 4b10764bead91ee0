package executor

import (
	"context"
	_ "embed" // the page script below
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/toolclad"
)

// Permission prompts (camera, microphone, geolocation, notifications, the
// clipboard, ...) are denied to every page of a session unless the
// manifest's [browser.permissions] grants the permission to the page's
// origin, and no page of a session ever raises a prompt:
//
//   - In a browser context of the session's own (launch, and live with
//     context = "isolated"), the context's permission overrides answer
//     every request: all denied, then each grant set for its origin
//     (setPermissions). They are the context's, so they go with it when
//     the session ends, and no other context (the user's own tabs) sees
//     them.
//   - In the user's own context the overrides would be the user's site
//     settings for every tab of the origin, so browsergate sets none:
//     each document of the session's pages gets a Permissions-Policy
//     header that turns the features it covers off in it and its frames
//     (permissionsPolicy, added by the target guard as the response
//     headers pass), and the page script answers the rest with a denial.
//
// Each request a page makes is seen by a script in the page
// (js/permission_requests.js), the only place Chromium 156 shows one, and
// recorded with the session's refused requests (layer "permission"), or,
// when the manifest grants it, as a grant in the record's
// permissions_granted.

// permissionLayer is the Blocked.Layer of a permission request denied.
const permissionLayer = "permission"

// permissionBinding is the binding the page script reports requests
// through; the script takes it out of the page's sight before any page
// script runs.
const permissionBinding = "__browsergatePermissionAsked"

// grantPermissionsCmd is Browser.grantPermissions, which cdproto no longer
// has (the protocol marks it deprecated for setPermission) and Chromium 156
// still answers: with no permission listed and no origin, it denies every
// permission type the browser knows to every origin of the context,
// those PermissionNames has no name for included.
var grantPermissionsCmd = cdp.Command[grantPermissionsParams, cdp.Empty]{Method: "Browser.grantPermissions"}

type grantPermissionsParams struct {
	Permissions      []string             `json:"permissions"`
	BrowserContextID cdp.BrowserContextID `json:"browserContextId"`
}

// setPermissions denies every permission in the browser context bc, then
// grants each of grants to its origins. An override without a context
// would be the default context's, the user's in live mode: it refuses
// that. Any error leaves the session without its browser context (the
// caller closes it): a page must never run with permissions unset.
func setPermissions(ctx context.Context, bc cdp.BrowserContextID, grants toolclad.Permissions) error {
	if bc == "" {
		return fmt.Errorf("permission overrides need a browser context of the session's own")
	}
	if _, err := chromedp.CallBrowser(ctx, grantPermissionsCmd, grantPermissionsParams{Permissions: []string{}, BrowserContextID: bc}); err != nil {
		return fmt.Errorf("deny every permission: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(grants)) {
		for _, origin := range grants[name] {
			p := browser.SetPermissionParams{Permission: permissionDescriptor(name), Setting: browser.PermissionSettingGranted,
				Origin: origin, BrowserContextID: bc}
			if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, p); err != nil {
				return fmt.Errorf("grant %s to %s: %w", name, origin, err)
			}
		}
	}
	return nil
}

// permissionDescriptor is the descriptor Chromium wants for a permission:
// push only for notifications the user sees, fullscreen as the automatic
// fullscreen a page asks for without a gesture (the only one that is a
// permission).
func permissionDescriptor(name string) *browser.PermissionDescriptor {
	d := &browser.PermissionDescriptor{Name: name}
	switch name {
	case "push":
		d.UserVisibleOnly = true
	case "fullscreen":
		d.AllowWithoutGesture = true
	}
	return d
}

// permissionsPolicyFeatures are the Permissions-Policy features that turn
// off what a session's document could ask a permission for, in the user's
// context (where no override is browsergate's to set). A feature off in a
// document is off in its frames, whatever their allow attributes say, and
// the browser refuses a request for it without a prompt.
//
// Besides the permissions, it turns off the device choosers (bluetooth,
// hid, serial, usb) and what would ask for the user's credentials (a
// passkey or security key, a federated sign-in, an SMS code): none of
// them is a permission an override answers, and each would show the user
// a dialog. Fullscreen stays on: it asks nothing of the user (it needs a
// click, and shows how to leave it), and video players and slide decks
// would lose their fullscreen button.
var permissionsPolicyFeatures = []string{
	"accelerometer", "ambient-light-sensor", "bluetooth", "camera", "captured-surface-control",
	"clipboard-read", "clipboard-write", "digital-credentials-get", "display-capture", "geolocation", "gyroscope",
	"hid", "identity-credentials-get", "idle-detection", "local-fonts", "local-network-access", "magnetometer", "microphone",
	"midi", "otp-credentials", "payment", "publickey-credentials-create", "publickey-credentials-get",
	"screen-wake-lock", "serial", "speaker-selection", "storage-access", "usb", "window-management", "xr-spatial-tracking",
}

// deviceChoosers are the device choosers the page script refuses in every
// mode (js/permission_requests.js): a request for one is recorded like a
// permission's, and no manifest key grants one.
var deviceChoosers = []string{"bluetooth", "hid", "serial", "usb"}

// permissionsPolicy is the Permissions-Policy header value a session's
// document gets in the user's context: every feature of
// permissionsPolicyFeatures allowed to no origin. It is the document's
// only Permissions-Policy: the server's own fields are taken out
// (droppedResponseHeader), since one that does not parse would void the
// joined header, this field with it.
var permissionsPolicy = func() string {
	parts := make([]string, len(permissionsPolicyFeatures))
	for i, f := range permissionsPolicyFeatures {
		parts[i] = f + "=()"
	}
	return strings.Join(parts, ", ")
}()

// permissionRequestsJS is the page script that reports (and, in the
// user's context, answers) permission requests.
//
//go:embed js/permission_requests.js
var permissionRequestsJS string

// permissionsScript is js/permission_requests.js for a session: deny is
// true in the user's context, where the script answers what no
// Permissions-Policy covers.
func permissionsScript(deny bool) string {
	return strings.NewReplacer("DENY", strconv.FormatBool(deny), "BINDING", strconv.Quote(permissionBinding)).Replace(permissionRequestsJS)
}

// maxPermissionReport bounds what one report of the page script may be:
// a permission's name and the page's URL. A longer one is the page's own
// doing and is cut.
const maxPermissionReport = 8 << 10

// askingFrame is the frame a permission request came from, as the
// browser told the guard (never as the page's script says).
type askingFrame struct {
	// URL is the frame's document URL as the browser reported it
	// committed; "" when the guard does not know the frame.
	URL string
	// Unapplied says why a grant to the origin of URL would not reach
	// this frame ("" when it would): Browser.setPermission grants an
	// origin's top-level pages, and the browser refuses the same request
	// from a frame of that origin embedded by another origin's page, or
	// from a sandboxed document (an opaque origin), whatever the
	// Permissions API says there.
	Unapplied string
}

// permissionAsked records one request a page reported ("name[,name] url"):
// each permission not granted to the frame's origin goes into the
// session's refused requests; a granted one is logged and kept in the
// same log as a grant, never as a refusal (blockLog.granted). from is the
// frame that asked; when the guard does not know it (from.URL is "") the
// request is recorded as refused, at the URL the page's script gave,
// whatever the grants: what the page says decides no grant. A grant to
// the frame's origin that the browser does not apply to that frame
// (from.Unapplied) is recorded as refused too, with the reason: that is
// what the page got. A name browsergate does not know is not recorded
// (the page can call the binding itself: it can add a record, never a
// grant).
func permissionAsked(log *blockLog, grants toolclad.Permissions, logger *slog.Logger, payload string, from askingFrame) {
	if len(payload) > maxPermissionReport {
		payload = payload[:maxPermissionReport]
	}
	names, reported, _ := strings.Cut(payload, " ")
	pageURL := from.URL
	origin, known := pageOrigin(pageURL), pageURL != ""
	var docs []string // the frame's document, as the browser named it (Blocked.Docs)
	if h := hostOf(pageURL); h != "" {
		docs = []string{h}
	}
	if !known {
		pageURL = reported
	}
	for _, name := range strings.Split(names, ",") {
		if slices.Contains(deviceChoosers, name) {
			log.add(Blocked{Time: time.Now(), URL: pageURL, Rule: "permissions " + strconv.Quote(name), Layer: permissionLayer, Docs: docs,
				Reason: fmt.Sprintf("the page asked for a %s device: denied without a prompt, browsergate shows no device chooser", name)})
			continue
		}
		if !slices.Contains(toolclad.PermissionNames, name) {
			continue
		}
		granted := origin != "" && grants.Granted(name, origin)
		if granted && from.Unapplied == "" {
			// Kept before it is logged: once the line shows, the next
			// record takes it.
			log.granted(permissionGrant{URL: pageURL, Permission: name, Origin: origin})
			logger.Info("a page asked for a permission [browser.permissions] grants its origin", "permission", name, "origin", origin)
			continue
		}
		reason := fmt.Sprintf("the page asked for %s: denied without a prompt, [browser.permissions] grants it to no page of this origin", name)
		switch {
		case !known:
			reason = fmt.Sprintf("the page asked for %s: denied without a prompt (recorded as refused: the frame that asked is not one browsergate knows)", name)
		case origin == "":
			reason = fmt.Sprintf("the page asked for %s: denied without a prompt (a page of no web origin)", name)
		case granted:
			reason = fmt.Sprintf("the page asked for %s: denied without a prompt; [browser.permissions] grants it to %s, but %s", name, origin, from.Unapplied)
		}
		log.add(Blocked{Time: time.Now(), URL: pageURL, Rule: "permissions " + strconv.Quote(name), Reason: reason, Layer: permissionLayer, Docs: docs})
	}
}

// pageOrigin is the origin of an http or https page URL, as the browser
// serialises it, or "".
func pageOrigin(raw string) string {
	u, err := scope.ParseURL(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return ""
	}
	if u.Port != "" {
		return u.Scheme + "://" + u.Host + ":" + u.Port
	}
	return u.Scheme + "://" + u.Host
}
