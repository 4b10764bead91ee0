package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadStarterSite: init takes the scope and the tool's name from the
// URL's host, grants a loopback or private address (its port), lists a
// name's port when it is not its scheme's default, and refuses what is not
// an http(s) URL with a host, and a metadata address.
func TestReadStarterSite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, name, host string
		grants, ports   []string
	}{
		{url: "https://example.test", name: "example_test", host: "example.test"},
		{url: "https://WWW.Example.com:8443/a", name: "www_example_com", host: "www.example.com", ports: []string{"80", "443", "8443"}},
		{url: "http://example.com:80/", name: "example_com", host: "example.com"},
		{url: "http://127.0.0.1:8000/", name: "site", host: "127.0.0.1", grants: []string{"127.0.0.1/32 ports 8000"}},
		{url: "http://192.168.1.20/", name: "site", host: "192.168.1.20", grants: []string{"192.168.1.20/32 ports 80"}},
		{url: "http://[::1]:9000/", name: "site", host: "[::1]", grants: []string{"::1/128 ports 9000"}},
		{url: "http://localhost:3000/", name: "localhost", host: "localhost", grants: []string{"127.0.0.1/32 ports 3000", "::1/128 ports 3000"}},
	} {
		s, err := readStarterSite(tc.url)
		if err != nil {
			t.Errorf("readStarterSite(%q): %v", tc.url, err)
			continue
		}
		if s.name != tc.name || s.host != tc.host || !slices.Equal(s.grants, tc.grants) || !slices.Equal(s.ports, tc.ports) {
			t.Errorf("readStarterSite(%q) = name %q host %q grants %q ports %q; want %q %q %q %q",
				tc.url, s.name, s.host, s.grants, s.ports, tc.name, tc.host, tc.grants, tc.ports)
		}
	}
	for _, bad := range []string{"example.test", "ftp://example.test/", "https://", "http://169.254.169.254/", "file:///etc/passwd"} {
		if _, err := readStarterSite(bad); !errors.Is(err, errUsage) {
			t.Errorf("readStarterSite(%q) = %v, want a usage error", bad, err)
		}
	}
}

// TestInitNeverOverwrites: init refuses, writing nothing, when the
// manifest or the policy file it would write exists.
func TestInitNeverOverwrites(t *testing.T) {
	t.Parallel()
	for _, existing := range []string{"example_test.toml", filepath.Join("policies", "example_test.cedar")} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "policies"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, existing), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{"init", "https://example.test", "--dir", dir}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), filepath.Join(dir, existing)+" already exists") {
			t.Errorf("init over %s: exit %d\n%s", existing, code, stderr.String())
		}
		if b, _ := os.ReadFile(filepath.Join(dir, existing)); string(b) != "mine" {
			t.Errorf("init overwrote %s: %q", existing, b)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, "policies"))
		files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
		if len(entries)+len(files) != 1 {
			t.Errorf("init over %s wrote files anyway: %d toml, %d in policies", existing, len(files), len(entries))
		}
	}
}
