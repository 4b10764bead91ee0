package netlab

import (
	"errors"
	"net/netip"
	"testing"
)

// TestOwnerPid: the pid is read from a lab namespace's name, and from
// nothing else.
func TestOwnerPid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"bglab-4242-7-P1", 4242, true},
		{"bglab-4242-7-pool_host", 4242, true},
		{"bglab-x-7-P1", 0, false},
		{"bglab-4242", 0, false},
		{"other-4242-7-P1", 0, false},
		{"bglab-0-1-A", 0, false},
	} {
		if pid, ok := ownerPid(tc.name); pid != tc.pid || ok != tc.ok {
			t.Errorf("ownerPid(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}

// TestProcAddr: addresses are written as /proc/net/tcp and tcp6 write
// them on this (little-endian) machine kind.
func TestProcAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:9222": "0100007F:2406",
		"10.77.1.2:80":   "02014D0A:0050",
		"[::1]:9222":     "00000000000000000000000001000000:2406",
	} {
		if got := procAddr(netip.MustParseAddrPort(in)); got != want {
			t.Errorf("procAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestLiteral: Listen and Dial take IP literals (an empty host only to
// listen), never a name their resolver would look up outside the lab.
func TestLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr    string
		emptyOK bool
		err     error
	}{
		{"10.0.0.1:80", false, nil},
		{"[fd00::1]:80", false, nil},
		{"[fe80::1%v1a]:80", false, nil},
		{":80", true, nil},
		{":80", false, ErrNotLiteral},
		{"localhost:80", true, ErrNotLiteral},
		{"example.com:443", false, ErrNotLiteral},
	} {
		if err := literal(tc.addr, tc.emptyOK); !errors.Is(err, tc.err) {
			t.Errorf("literal(%q, %v) = %v, want %v", tc.addr, tc.emptyOK, err, tc.err)
		}
	}
}
