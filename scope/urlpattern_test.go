package scope

import "testing"

func TestURLPatternHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, want string
		ok            bool
	}{
		{"example.com", "example.com", true},
		{"EXAMPLE.com.", "example.com", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"0x7f.1", "127.0.0.1", true},
		{"*.example.com", "*.example.com", true},
		{"*.bücher.example", "*.xn--bcher-kva.example", true},
		{"*", "", false},
		{"admin.*", "", false},
		{"app-*.example.com", "", false},
		{"*.app-*.example.com", "", false},
		{"[::1]", "", false},
	} {
		p, err := ParsePattern(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		got, ok := p.URLPatternHost()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q.URLPatternHost() = %q, %v; want %q, %v", tc.pattern, got, ok, tc.want, tc.ok)
		}
	}
}
