// Package ring is the knots command's test fixture: a.go, b.go and c.go
// reach each other only because a field use (a.go → b.go) and a method
// use (b.go → c.go) make edges; d.go is used by the ring but uses nothing,
// e.go uses the ring but nothing uses it; f.go and g.go are a knot of two.
package ring
