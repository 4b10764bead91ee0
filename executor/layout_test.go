package executor

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLaunchExecutable(t *testing.T) {
	t.Parallel()
	installed := func(string) bool { return true }
	missing := func(string) bool { return false }
	cases := []struct {
		name         string
		manifestPath string
		headless     bool
		installed    func(string) bool
		want         string
	}{
		{"headless with the shell installed", "", true, installed, headlessShell},
		{"headless without the shell", "", true, missing, fullBrowser},
		{"headed: only the full browser has a window", "", false, installed, fullBrowser},
		{"the manifest's path, headless", "/opt/chrome/chrome", true, installed, "/opt/chrome/chrome"},
		{"the manifest's path, headed", "/opt/chrome/chrome", false, missing, "/opt/chrome/chrome"},
		{"the manifest's path even when it names the full browser", fullBrowser, true, installed, fullBrowser},
	}
	for _, c := range cases {
		if got := launchExecutable(c.manifestPath, c.headless, c.installed); got != c.want {
			t.Errorf("%s: launchExecutable(%q, %v) = %q, want %q", c.name, c.manifestPath, c.headless, got, c.want)
		}
	}
}

func TestIsExecutableFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, text := filepath.Join(dir, "script"), filepath.Join(dir, "text")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte("text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		want bool
	}{
		{"an executable file", script, true},
		{"a file no one may execute", text, false},
		{"a directory", dir, false},
		{"nothing there", filepath.Join(dir, "none"), false},
	}
	for _, c := range cases {
		if got := isExecutableFile(c.path); got != c.want {
			t.Errorf("%s: isExecutableFile(%q) = %v, want %v", c.name, c.path, got, c.want)
		}
	}
}
