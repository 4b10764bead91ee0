package executor

import (
	"strings"
	"testing"
)

// TestEmulationWith: each argument given replaces its setting and the
// others stay; reset clears everything first; a viewport replaces a
// device's size but keeps its touch and user agent; values out of bounds
// are refused with the argument and the bound named.
func TestEmulationWith(t *testing.T) {
	t.Parallel()
	phone, err := emulation{}.with(map[string]any{"device": "pixel-7", "timezone": "Asia/Tokyo", "cpu": int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	if phone.width != 412 || !phone.touch || !phone.mobile || phone.timezone != "Asia/Tokyo" || phone.cpu != 4 || !strings.Contains(phone.deviceUA, "Pixel 7") {
		t.Fatalf("pixel-7 with a timezone and cpu 4: %+v", phone)
	}
	wide, err := phone.with(map[string]any{"viewport": "1280x720", "network": "slow-3g"})
	if err != nil {
		t.Fatal(err)
	}
	if wide.width != 1280 || wide.height != 720 || wide.device != "" || !wide.touch || wide.timezone != "Asia/Tokyo" || wide.network != "slow-3g" {
		t.Errorf("a viewport after the preset: %+v, want the size replaced and the rest kept", wide)
	}
	if none, _ := wide.with(map[string]any{"network": "none"}); none.network != "" {
		t.Errorf("network none left %q", none.network)
	}
	reset, err := wide.with(map[string]any{"reset": true, "locale": "fr"})
	if err != nil {
		t.Fatal(err)
	}
	if reset.width != 0 || reset.timezone != "" || reset.network != "" || reset.locale != "fr" || reset.zero() {
		t.Errorf("reset with a locale: %+v, want the locale alone", reset)
	}
	if !(emulation{}).zero() || (emulation{}).String() != "none (the browser's own)" {
		t.Errorf("the zero emulation says %q", emulation{}.String())
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"viewport": "99x500"}, "100 to 4096"},
		{map[string]any{"viewport": "5000x500"}, "100 to 4096"},
		{map[string]any{"viewport": "x500"}, "<width>x<height>"},
		{map[string]any{"geolocation": "-90.5,0"}, "latitude must be -90 to 90"},
		{map[string]any{"geolocation": "0,180.01"}, "longitude -180 to 180"},
		{map[string]any{"geolocation": "north"}, "<latitude>,<longitude>"},
		{map[string]any{"cpu": int64(21)}, "1 to 20"},
		{map[string]any{"cpu": int64(0)}, "1 to 20"},
		{map[string]any{"device": "pager"}, "one of pixel-7"},
		{map[string]any{"network": "5g"}, "one of none"},
	} {
		if _, err := (emulation{}).with(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// TestEmulationCalls: every call gives a tab the whole emulation, each
// setting or its reset, the timezone and locale first (the browser judges
// those, and a refusal there leaves the rest unchanged); a locale alone
// goes with the browser's own user agent, never an empty one.
func TestEmulationCalls(t *testing.T) {
	t.Parallel()
	methods := func(calls []cdpCall) string {
		var m []string
		for _, c := range calls {
			m = append(m, strings.TrimPrefix(c.method, "Emulation."))
		}
		return strings.Join(m, " ")
	}
	zero := emulation{}.calls("")
	if got, want := methods(zero), "setTimezoneOverride setLocaleOverride setUserAgentOverride clearDeviceMetricsOverride setTouchEmulationEnabled clearGeolocationOverride setCPUThrottlingRate"; got != want {
		t.Errorf("the reset calls: %s, want %s", got, want)
	}
	if zero[6].params["rate"] != 1 || zero[2].params["userAgent"] != "" {
		t.Errorf("the reset calls set %v and %v, want rate 1 and no user agent", zero[6].params, zero[2].params)
	}
	e := emulation{locale: "de-DE", width: 500, height: 400, geo: &[2]float64{1, 2}}
	calls := e.calls("Browser/1")
	if !e.needsBrowserUA() || calls[2].params["userAgent"] != "Browser/1" || calls[2].params["acceptLanguage"] != "de-DE" {
		t.Errorf("a locale alone: %v, want the browser's user agent with the locale", calls[2].params)
	}
	if got := methods(calls); !strings.Contains(got, "setDeviceMetricsOverride") || !strings.Contains(got, "setGeolocationOverride") {
		t.Errorf("a viewport and a position: %s", got)
	}
	if throttleRule(emulation{}) != nil {
		t.Error("no network preset, yet a throttle rule")
	}
	if r := throttleRule(emulation{network: "offline"}); r == nil || !r.Offline || r.URLPattern != "" {
		t.Errorf("offline: %+v, want an offline rule for every request", r)
	}
}

// FuzzEmulationArgs: no viewport or position string makes with panic,
// and whatever it accepts is within the bounds.
func FuzzEmulationArgs(f *testing.F) {
	for _, s := range []string{"1280x720", "52.52,13.405", "-90,-180", "99999x1", "1e3,2", "NaN,0", "+1,+1", "0x0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if e, err := (emulation{}).with(map[string]any{"viewport": s}); err == nil && (e.width < viewportMin || e.width > viewportMax || e.height < viewportMin || e.height > viewportMax) {
			t.Errorf("viewport %q accepted as %dx%d", s, e.width, e.height)
		}
		if e, err := (emulation{}).with(map[string]any{"geolocation": s}); err == nil && !(e.geo[0] >= -90 && e.geo[0] <= 90 && e.geo[1] >= -180 && e.geo[1] <= 180) {
			t.Errorf("geolocation %q accepted as %v", s, *e.geo)
		}
	})
}
