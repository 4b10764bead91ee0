package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ChromiumFlags returns the switches Chromium needs on this machine kind
// (headless, no sandbox as root, no GPU) and those that keep it quiet on a
// closed network: a new slice at each call, the caller's to change.
func ChromiumFlags() []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"}
}

// StartChromium runs /usr/bin/chromium with args, its DevTools port on a
// free port of 127.0.0.1 and a fresh profile, as a user's own browser runs
// for live mode, and returns the port and the profile directory once the
// port answers. The browser and its helpers are killed when the test ends.
func StartChromium(t testing.TB, args ...string) (port int, userDir string) {
	t.Helper()
	return startChromium(t, nil, args)
}

// StartChromiumPreloadingOff is StartChromium with the profile's "Preload
// pages" setting off (chrome://settings/performance; the preference
// net.network_prediction_options = 2, written into the new profile's
// Default/Preferences before the browser starts), as the README says to
// start a user's browser for live mode in the user's context.
func StartChromiumPreloadingOff(t testing.TB, args ...string) (port int, userDir string) {
	t.Helper()
	return startChromium(t, map[string]any{"net": map[string]any{"network_prediction_options": 2}}, args)
}

// startChromium starts Chromium on a new profile whose Default/Preferences
// holds prefs (none when nil).
func startChromium(t testing.TB, prefs map[string]any, args []string) (port int, userDir string) {
	t.Helper()
	// Chromium's helpers may still write to the profile after the browser
	// is killed, so it is removed best-effort, not by t.TempDir (whose
	// cleanup fails on a directory that is not empty).
	userDir, err := os.MkdirTemp("", "browsergate-live-")
	if err != nil {
		t.Fatal(err)
	}
	if prefs != nil {
		data, err := json.Marshal(prefs)
		if err == nil {
			err = os.MkdirAll(filepath.Join(userDir, "Default"), 0o700)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(userDir, "Default", "Preferences"), data, 0o600)
		}
		if err != nil {
			os.RemoveAll(userDir)
			t.Fatalf("write the profile's preferences: %v", err)
		}
	}
	args = append(append([]string{}, args...), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+userDir, "about:blank")
	cmd := exec.Command("/usr/bin/chromium", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so the cleanup kills every helper too
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		os.RemoveAll(userDir)
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(userDir, "DevToolsActivePort")); err == nil {
			if _, err := fmt.Sscanf(string(data), "%d", &port); err == nil && port > 0 {
				if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/version", port)); err == nil {
					resp.Body.Close()
					return port, userDir
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("chromium did not open its DevTools port within 30 s")
	return 0, ""
}
