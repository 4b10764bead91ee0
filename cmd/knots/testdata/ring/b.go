package ring

type Inner struct{ Level int }

// grow calls Tick, a method of Clock (d.go) declared in c.go.
func (i *Inner) grow(k *Clock) { k.Tick() }
