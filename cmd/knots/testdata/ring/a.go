package ring

// start reads Level, a field of Inner (b.go) promoted through Outer (c.go).
func start(o *Outer) int { return o.Level }
