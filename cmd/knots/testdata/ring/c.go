package ring

type Outer struct{ Inner }

func (k *Clock) Tick() { start(nil) }
