package ring

func run() int { return start(&Outer{}) }
