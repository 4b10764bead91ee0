package ring

type Clock struct{}
