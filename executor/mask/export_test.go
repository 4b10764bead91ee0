package mask

// What the black-box tests read of the package's insides.

// Plain is plain: what s says, whichever way it is spelled.
var Plain = plain

// Windows1252 is windows1252: the character a byte stands for there.
var Windows1252 = windows1252

// Held is held: the pieces noted so far.
func (a *AgentTexts) Held() []string { return a.held() }
