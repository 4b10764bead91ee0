package cedar_test

import "testing"

// BenchmarkDecide measures one gate decision against the shipped policies
// (DESIGN.md: a whole gate decision well under 100µs).
func BenchmarkDecide(b *testing.B) {
	e := loadShipped(b)
	for _, cmd := range []string{"navigate", "submit_form", "click"} {
		b.Run(cmd, func(b *testing.B) {
			r := baseRequest(cmd)
			r.Args = map[string]any{"url": "https://docs.example.com/a", "selector": "#login"}
			b.ReportAllocs()
			for b.Loop() {
				if d := e.Decide(r); len(d.Reasons) == 0 {
					b.Fatal("no reason")
				}
			}
		})
	}
}
