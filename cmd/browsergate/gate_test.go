package main

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/scope/egress"
)

// TestGateWarnsOfWrongCredentialsOncePerMinute: a missing Proxy-Authorization
// (a browser's first request, answered with the challenge) and the
// credentials of a session just ended are no warning from a pool address;
// wrong credentials are, and any refusal from outside the pools' networks,
// at most once a minute for each address, and at most refusalWarnCap a
// minute in all.
func TestGateWarnsOfWrongCredentialsOncePerMinute(t *testing.T) {
	var log bytes.Buffer
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	w := &refusalWarner{
		logger: slog.New(slog.NewTextHandler(&log, nil)),
		pools:  []netip.Prefix{netip.MustParsePrefix("10.0.5.0/24")},
		now:    func() time.Time { return now },
	}
	pool, pool2, outside := netip.MustParseAddrPort("10.0.5.2:40000"), netip.MustParseAddrPort("10.0.5.3:40000"), netip.MustParseAddrPort("192.168.9.9:5000")
	warnings := func() int { return strings.Count(log.String(), "level=WARN") }

	w.refused(pool, egress.AuthMissing)
	w.refused(pool, egress.AuthRemoved)
	if n := warnings(); n != 0 {
		t.Fatalf("%d warnings for a pool browser's ordinary refusals:\n%s", n, log.String())
	}
	w.refused(pool, egress.AuthWrongPassword)
	w.refused(pool, egress.AuthUnknownUser)
	if n := warnings(); n != 1 || !strings.Contains(log.String(), "wrong password") || !strings.Contains(log.String(), "remote=10.0.5.2:40000") {
		t.Fatalf("wrong credentials from a pool address, twice within a minute: %d warnings, want 1:\n%s", n, log.String())
	}
	w.refused(pool2, egress.AuthMalformed)
	w.refused(outside, egress.AuthMissing)
	if n := warnings(); n != 3 || !strings.Contains(log.String(), "outside every pool's networks") {
		t.Fatalf("another pool address's wrong credentials and a missing one from outside the pools: %d warnings, want 3:\n%s", n, log.String())
	}
	now = now.Add(refusalWarnEvery)
	w.refused(pool, egress.AuthWrongPassword)
	if n := warnings(); n != 4 {
		t.Fatalf("a minute later the same address: %d warnings, want 4:\n%s", n, log.String())
	}

	// A client that changes its address each time gets no more than
	// refusalWarnCap warnings a minute; the rest are counted in the next
	// minute's first one.
	now = now.Add(refusalWarnEvery)
	log.Reset()
	for i := range refusalWarnCap + 30 {
		w.refused(netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 168, byte(i >> 8), byte(i)}), 5000), egress.AuthMissing)
	}
	if n := warnings(); n != refusalWarnCap {
		t.Fatalf("%d refusals from as many addresses in a minute: %d warnings, want %d", refusalWarnCap+30, n, refusalWarnCap)
	}
	now = now.Add(refusalWarnEvery)
	w.refused(outside, egress.AuthMissing)
	if !strings.Contains(log.String(), "not_warned_of=30") {
		t.Errorf("the next minute does not count the 30 refusals not warned of:\n%s", log.String())
	}
}
