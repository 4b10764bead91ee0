package scope_test

import "testing"

func BenchmarkCheck(b *testing.B) {
	s := mustNew(b, testConfig)
	for _, bc := range []struct{ name, url string }{
		{"allowed", "https://www.example.com/docs/index.html?q=1"},
		{"denied", "http://2130706434/canary"},
		{"blocked", "https://admin.example.com/"},
		{"idn", "https://www.bücher.example/"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Check(bc.url)
			}
		})
	}
}
