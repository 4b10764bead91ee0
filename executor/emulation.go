package executor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/browsergate/browsergate/toolclad"
)

// What emulate sets (commands_emulate.go), as values: the settings, the
// presets, and the DevTools commands that give a tab the settings. Nothing
// here touches the browser.

// emulation is the emulation a session's tabs have: the zero value is
// none (the browser's own).
type emulation struct {
	width, height int     // viewport in CSS pixels (0: the window's)
	scale         float64 // device pixel ratio (0: the screen's)
	mobile, touch bool
	device        string // the preset that set the metrics ("" for none)
	deviceUA      string // the preset's user agent
	userAgent     string // the user agent given (it wins over deviceUA)
	locale        string
	timezone      string
	geo           *[2]float64 // latitude, longitude
	network       string      // a toolclad.EmulatedNetworks preset ("": none)
	cpu           int         // CPU slowdown rate (0 or 1: none)
}

// emulatedDevice is one of emulate's device presets.
type emulatedDevice struct {
	width, height int
	scale         float64
	mobile, touch bool
	userAgent     string // "" keeps the browser's
}

// emulatedDevices are the presets, with the figures Playwright's device
// descriptors give the same devices.
var emulatedDevices = map[string]emulatedDevice{
	"pixel-7": {412, 839, 2.625, true, true,
		"Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"},
	"iphone-15": {393, 659, 3, true, true,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"},
	"ipad-mini": {768, 1024, 2, true, true,
		"Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"},
	"desktop": {1920, 1080, 1, false, false, ""},
}

// networkPreset is a throttling preset's conditions: Chrome DevTools'
// figures (latency in ms, throughput in bytes per second).
type networkPreset struct {
	offline           bool
	latency, down, up float64
}

var networkPresets = map[string]networkPreset{
	"offline": {offline: true},
	"slow-3g": {latency: 2000, down: 50000, up: 50000},
	"fast-3g": {latency: 562.5, down: 180000, up: 84375},
	"fast-4g": {latency: 165, down: 1012500, up: 168750},
}

// Viewport bounds, in CSS pixels: no device is smaller, and a larger one
// would only make screenshots huge.
const (
	viewportMin = 100
	viewportMax = 4096
)

// emulateArgs are emulate's arguments, in the order a reply names them.
var emulateArgs = []string{"viewport", "device", "user_agent", "locale", "timezone", "geolocation", "network", "cpu", "reset"}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// with is the emulation after a call with args: reset clears it first,
// each argument given replaces its setting, the others stay.
func (e emulation) with(args map[string]any) (emulation, error) {
	if reset, _ := args["reset"].(bool); reset {
		e = emulation{}
	}
	if v, ok := args["device"].(string); ok {
		d, known := emulatedDevices[v]
		if !known {
			return e, fmt.Errorf("emulate: device %q: one of %s", v, strings.Join(toolclad.EmulatedDevices, ", "))
		}
		e.width, e.height, e.scale, e.mobile, e.touch, e.device, e.deviceUA = d.width, d.height, d.scale, d.mobile, d.touch, v, d.userAgent
	}
	if v, ok := args["viewport"].(string); ok {
		w, h, err := parseViewport(v)
		if err != nil {
			return e, err
		}
		e.width, e.height, e.device = w, h, ""
	}
	if v, ok := args["user_agent"].(string); ok {
		e.userAgent = v
	}
	if v, ok := args["locale"].(string); ok {
		e.locale = v
	}
	if v, ok := args["timezone"].(string); ok {
		e.timezone = v
	}
	if v, ok := args["geolocation"].(string); ok {
		geo, err := parseGeolocation(v)
		if err != nil {
			return e, err
		}
		e.geo = geo
	}
	if v, ok := args["network"].(string); ok {
		if _, known := networkPresets[v]; !known && v != "none" {
			return e, fmt.Errorf("emulate: network %q: one of %s", v, strings.Join(toolclad.EmulatedNetworks, ", "))
		}
		e.network = v
		if v == "none" {
			e.network = ""
		}
	}
	if v, ok := args["cpu"].(int64); ok {
		if v < 1 || v > toolclad.MaxCPUThrottle {
			return e, fmt.Errorf("emulate: cpu %d: a rate from 1 to %d", v, toolclad.MaxCPUThrottle)
		}
		e.cpu = int(v)
	}
	return e, nil
}

// parseViewport reads "<width>x<height>", each within the bounds.
func parseViewport(v string) (int, int, error) {
	ws, hs, ok := strings.Cut(v, "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil {
		return 0, 0, fmt.Errorf("emulate: viewport %q: give <width>x<height> in CSS pixels, e.g. 1280x720", v)
	}
	if w < viewportMin || w > viewportMax || h < viewportMin || h > viewportMax {
		return 0, 0, fmt.Errorf("emulate: viewport %q: width and height must each be %d to %d pixels", v, viewportMin, viewportMax)
	}
	return w, h, nil
}

// parseGeolocation reads "<latitude>,<longitude>" in decimal degrees.
func parseGeolocation(v string) (*[2]float64, error) {
	las, los, ok := strings.Cut(v, ",")
	la, laerr := strconv.ParseFloat(las, 64)
	lo, loerr := strconv.ParseFloat(los, 64)
	if !ok || laerr != nil || loerr != nil {
		return nil, fmt.Errorf("emulate: geolocation %q: give \"<latitude>,<longitude>\" in decimal degrees, e.g. 52.52,13.405", v)
	}
	if !(la >= -90 && la <= 90 && lo >= -180 && lo <= 180) { // NaN too
		return nil, fmt.Errorf("emulate: geolocation %q: latitude must be -90 to 90 and longitude -180 to 180", v)
	}
	return &[2]float64{la, lo}, nil
}

// needsBrowserUA: the user agent override must name the browser's own
// user agent (a locale's Accept-Language goes with one).
func (e emulation) needsBrowserUA() bool {
	return e.locale != "" && e.userAgent == "" && e.deviceUA == ""
}

// zero reports whether nothing is emulated.
func (e emulation) zero() bool {
	return e.width == 0 && !e.touch && e.userAgent == "" && e.deviceUA == "" && e.locale == "" && e.timezone == "" &&
		e.geo == nil && e.network == "" && e.cpu <= 1
}

// cdpCall is one DevTools command.
type cdpCall struct {
	method string
	params map[string]any
}

// calls are the commands that give a tab the emulation e, every setting
// of it (each replaces what a tab had): a tab gets the whole of it
// whatever it had before. browserUA is the browser's own user agent
// (needsBrowserUA).
func (e emulation) calls(browserUA string) []cdpCall {
	// The timezone and locale first: the browser judges whether it knows
	// them, and a refusal there leaves the rest untouched.
	calls := []cdpCall{
		{"Emulation.setTimezoneOverride", map[string]any{"timezoneId": e.timezone}},
		{"Emulation.setLocaleOverride", map[string]any{"locale": e.locale}},
	}
	ua := cmpOr(e.userAgent, e.deviceUA)
	if ua == "" && e.locale != "" {
		ua = browserUA
	}
	calls = append(calls, cdpCall{"Emulation.setUserAgentOverride", map[string]any{"userAgent": ua, "acceptLanguage": e.locale}})
	if e.width > 0 {
		calls = append(calls, cdpCall{"Emulation.setDeviceMetricsOverride", map[string]any{
			"width": e.width, "height": e.height, "deviceScaleFactor": e.scale, "mobile": e.mobile}})
	} else {
		calls = append(calls, cdpCall{"Emulation.clearDeviceMetricsOverride", map[string]any{}})
	}
	touch := map[string]any{"enabled": e.touch}
	if e.touch {
		touch["maxTouchPoints"] = 5
	}
	calls = append(calls, cdpCall{"Emulation.setTouchEmulationEnabled", touch})
	if e.geo != nil {
		calls = append(calls, cdpCall{"Emulation.setGeolocationOverride", map[string]any{"latitude": e.geo[0], "longitude": e.geo[1], "accuracy": 10}})
	} else {
		calls = append(calls, cdpCall{"Emulation.clearGeolocationOverride", map[string]any{}})
	}
	return append(calls, cdpCall{"Emulation.setCPUThrottlingRate", map[string]any{"rate": max(e.cpu, 1)}})
}

// String names every setting of e that is on, or "none".
func (e emulation) String() string {
	if e.zero() {
		return "none (the browser's own)"
	}
	var parts []string
	if e.device != "" {
		parts = append(parts, "device "+e.device)
	}
	if e.width > 0 {
		vp := fmt.Sprintf("viewport %dx%d", e.width, e.height)
		if e.scale > 0 {
			vp += fmt.Sprintf(" at %gx", e.scale)
		}
		if e.mobile {
			vp += ", mobile"
		}
		parts = append(parts, vp)
	}
	if e.touch {
		parts = append(parts, "touch")
	}
	if ua := cmpOr(e.userAgent, e.deviceUA); ua != "" {
		parts = append(parts, "user agent "+strconv.Quote(ua))
	}
	if e.locale != "" {
		parts = append(parts, "locale "+e.locale)
	}
	if e.timezone != "" {
		parts = append(parts, "timezone "+e.timezone)
	}
	if e.geo != nil {
		parts = append(parts, fmt.Sprintf("geolocation %g,%g", e.geo[0], e.geo[1]))
	}
	if e.network != "" {
		parts = append(parts, "network "+e.network)
	}
	if e.cpu > 1 {
		parts = append(parts, fmt.Sprintf("cpu %dx slower", e.cpu))
	}
	return strings.Join(parts, "; ")
}

// emulationError is a command of the emulation the current tab refused.
type emulationError struct {
	method string
	err    error
}

func (e *emulationError) Error() string { return fmt.Sprintf("%s: %v", e.method, e.err) }
func (e *emulationError) Unwrap() error { return e.err }

// explain says which argument the browser refused, and why.
func (e *emulationError) explain(next emulation) error {
	switch e.method {
	case "Emulation.setTimezoneOverride":
		return fmt.Errorf("emulate: timezone %q: the browser knows no such IANA timezone id (e.g. Europe/Berlin, America/New_York): %v; nothing was changed", next.timezone, e.err)
	case "Emulation.setLocaleOverride":
		return fmt.Errorf("emulate: locale %q: the browser knows no such locale (e.g. de-DE, fr, pt-BR): %v; nothing was changed", next.locale, e.err)
	}
	return fmt.Errorf("emulate: the tab refused %s: %v; its emulation was set back", e.method, e.err)
}
