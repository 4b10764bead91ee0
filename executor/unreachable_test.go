package executor

import "testing"

// TestUnreachableLogFindsTheNavigationsOwnDial: since finds a failed dial
// noted after the mark for the URL asked for (without its fragment) or its
// tunnel (host:port, the port defaulted by the scheme), and nothing for
// another URL or a failure noted before the mark.
func TestUnreachableLogFindsTheNavigationsOwnDial(t *testing.T) {
	var l unreachableLog
	l.note("http://127.0.0.1:8799/", "dial 127.0.0.1:8799 failed: dial tcp 127.0.0.1:8799: connect: connection refused")
	mark := l.mark()
	if why := l.since(mark, "http://127.0.0.1:8799/"); why != "" {
		t.Errorf("a failure before the mark was found: %q", why)
	}
	l.note("http://127.0.0.1:8799/", "dial 127.0.0.1:8799 failed: dial tcp 127.0.0.1:8799: connect: connection refused")
	l.note("app.example.com:443", "lookup app.example.com: no such host")
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:8799/#top", "connection refused"},
		{"https://app.example.com/login", "no such host: the name has no address"},
		{"http://127.0.0.1:8798/", ""},
		{"http://app.example.com/", ""},
	} {
		if got := l.since(mark, tc.url); got != tc.want {
			t.Errorf("since(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// TestUnreachableWhy puts the system's reasons in a user's words.
func TestUnreachableWhy(t *testing.T) {
	for reason, want := range map[string]string{
		"dial 10.0.0.1:80 failed: read: connection reset by peer":    "connection reset",
		"dial 10.0.0.1:80 failed: dial tcp 10.0.0.1:80: i/o timeout": "timed out",
		"dial 10.0.0.1:80 failed: context deadline exceeded":         "timed out",
		"dial 10.0.0.1:80 failed: connect: no route to host":         "no route to the host",
		"dial 10.0.0.1:80 failed: something new":                     "something new",
	} {
		if got := unreachableWhy(reason); got != want {
			t.Errorf("unreachableWhy(%q) = %q, want %q", reason, got, want)
		}
	}
}

// TestUnreachableLogKeepsTheLatest: the log keeps maxUnreachable failures,
// the latest.
func TestUnreachableLogKeepsTheLatest(t *testing.T) {
	var l unreachableLog
	for range maxUnreachable + 10 {
		l.note("http://a.test/", "connection refused")
	}
	l.note("http://b.test/", "connection refused")
	if len(l.entries) != maxUnreachable || l.since(0, "http://b.test/") != "connection refused" {
		t.Errorf("kept %d entries (want %d), the latest found: %q", len(l.entries), maxUnreachable, l.since(0, "http://b.test/"))
	}
}
