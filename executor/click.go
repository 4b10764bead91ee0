package executor

import (
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
)

// mouseClick is how click presses the mouse: the button ("": left), the
// clicks in a row (0: one) and the modifier keys held (CDP's bit field).
type mouseClick struct {
	button    input.MouseButton
	count     int64
	modifiers int64
	names     string // the modifiers as the agent gave them
}

// opensTab reports whether the click may open a tab or a window rather
// than act in this one: a middle click, or a click with Control, Meta or
// Shift held, on a link.
func (c mouseClick) opensTab() bool {
	return c.button == input.MouseButtonMiddle || c.modifiers&int64(kb.ModifierCtrl|kb.ModifierMeta|kb.ModifierShift) != 0
}

// verb says what the click did, for the reply.
func (c mouseClick) verb() string {
	v := "clicked"
	switch c.count {
	case 2:
		v = "double-clicked"
	case 3:
		v = "triple-clicked"
	}
	if c.button != "" && c.button != input.MouseButtonLeft {
		v = string(c.button) + "-" + v
	}
	if c.names != "" {
		v = c.names + "+" + v
	}
	return v
}
