package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/browsergate/browsergate/internal/pagetext"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/browsergate/browsergate/gate"
)

// press_key: a key with its modifiers (a chord, "Control+Enter"), pressed
// in the named element or the focused one, judged by where pressing it
// there leads (a form it submits, a link it follows).

// chord is a key press_key presses: the key, and the modifiers held down
// around it.
type chord struct {
	mods []modifier
	key  *kb.Key
	name string // the key's name as the agent gave it, for messages
}

// modifier is a modifier key and its bit in CDP's modifiers field.
type modifier struct {
	key  string
	code string
	vk   int64
	bit  kb.Modifier
}

var modifiers = map[string]modifier{
	"alt":     {"Alt", "AltLeft", 18, kb.ModifierAlt},
	"control": {"Control", "ControlLeft", 17, kb.ModifierCtrl},
	"meta":    {"Meta", "MetaLeft", 91, kb.ModifierMeta},
	"shift":   {"Shift", "ShiftLeft", 16, kb.ModifierShift},
}

// modifierAliases are the other names a chord may give a modifier.
var modifierAliases = map[string]string{"ctrl": "control", "option": "alt", "command": "meta", "cmd": "meta"}

// keysByName are kb's keys that have a name of their own (Enter,
// ArrowDown, F5, ...), by that name in lower case.
var keysByName = func() map[string]*kb.Key {
	m := map[string]*kb.Key{}
	for _, k := range kb.Keys {
		if utf8.RuneCountInString(k.Key) > 1 {
			m[strings.ToLower(k.Key)] = k
		}
	}
	return m
}()

// parseChord reads press_key's key: modifiers joined by "+" to a key name
// ("Enter", "ArrowDown", "Space") or one character ("a", "+").
func parseChord(s string) (chord, error) {
	var c chord
	rest := s
	for {
		i := strings.IndexByte(rest, '+')
		if i <= 0 || i == len(rest)-1 {
			break // no modifier left ("+" alone, or a chord ending in "++")
		}
		name := strings.ToLower(rest[:i])
		if a, ok := modifierAliases[name]; ok {
			name = a
		}
		m, ok := modifiers[name]
		if !ok {
			return chord{}, fmt.Errorf("key %q: %q is not a modifier (Control, Shift, Alt, Meta)", s, rest[:i])
		}
		if !slices.Contains(c.mods, m) {
			c.mods = append(c.mods, m)
		}
		rest = rest[i+1:]
	}
	c.name = rest
	if strings.EqualFold(rest, "space") {
		rest = " "
	}
	if utf8.RuneCountInString(rest) == 1 {
		r, _ := utf8.DecodeRuneInString(rest)
		// A shortcut (Control+A) names the key, not the capital letter.
		if c.has(kb.ModifierShift) {
			r = unicode.ToUpper(r)
		} else if len(c.mods) > 0 {
			r = unicode.ToLower(r)
		}
		if k, ok := kb.Keys[r]; ok {
			c.key = k
			return c, nil
		}
		c.key = &kb.Key{Key: string(r), Text: string(r), Unmodified: string(r), Print: unicode.IsPrint(r)}
		return c, nil
	}
	if k, ok := keysByName[strings.ToLower(rest)]; ok {
		c.key = k
		return c, nil
	}
	return chord{}, fmt.Errorf("key %q: unknown key %q (use a key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown, Home, F5, or one character)", s, rest)
}

func (c chord) has(bit kb.Modifier) bool {
	return slices.ContainsFunc(c.mods, func(m modifier) bool { return m.bit == bit })
}

// activation is the key as the gate judges it: "Enter" and " " may
// activate or submit what they are pressed in; with Control, Alt or Meta
// held they are shortcuts, still judged as Enter (a modified Enter on a
// link opens it in a new tab, which goes to the same place).
func (c chord) activation() string {
	switch c.key.Key {
	case "Enter", " ":
		return c.key.Key
	}
	return ""
}

// opensTab reports whether the chord may open a tab or a window rather
// than act in this one, as a modified click may: Enter or Space with
// Control, Meta or Shift held (on a link, or a form's button).
func (c chord) opensTab() bool {
	return c.activation() != "" && (c.has(kb.ModifierCtrl) || c.has(kb.ModifierMeta) || c.has(kb.ModifierShift))
}

// events are the key events of the chord: each modifier down, the key
// down (with its text, unless a shortcut modifier is held), the key up,
// and the modifiers up.
func (c chord) events() []*input.DispatchKeyEventParams {
	var bits kb.Modifier
	var out []*input.DispatchKeyEventParams
	for _, m := range c.mods {
		bits |= m.bit
		out = append(out, &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: m.key, Code: m.code,
			WindowsVirtualKeyCode: m.vk, NativeVirtualKeyCode: m.vk, Modifiers: int64(bits)})
	}
	shortcut := c.has(kb.ModifierCtrl) || c.has(kb.ModifierAlt) || c.has(kb.ModifierMeta)
	k := c.key
	down := &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: k.Key, Code: k.Code,
		WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native, Modifiers: int64(bits)}
	if k.Print && !shortcut {
		down.Type, down.Text, down.UnmodifiedText = input.DispatchKeyEventTypeKeyDown, k.Text, k.Unmodified
	}
	if cmd := editingCommand(c); cmd != "" {
		down.Commands = []string{cmd}
	}
	up := *down
	up.Type, up.Text, up.UnmodifiedText, up.Commands = input.DispatchKeyEventTypeKeyUp, "", "", nil
	out = append(out, down, &up)
	for i := len(c.mods) - 1; i >= 0; i-- {
		m := c.mods[i]
		bits &^= m.bit
		out = append(out, &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: m.key, Code: m.code,
			WindowsVirtualKeyCode: m.vk, NativeVirtualKeyCode: m.vk, Modifiers: int64(bits)})
	}
	return out
}

// editingCommand is the editor command a shortcut runs in a text field.
// Chromium runs the platform's own key bindings only for real keyboard
// input, so the common ones are named with the key event.
func editingCommand(c chord) string {
	ctrl := c.has(kb.ModifierCtrl) || c.has(kb.ModifierMeta)
	if !ctrl || c.has(kb.ModifierAlt) {
		return ""
	}
	switch strings.ToLower(c.key.Key) {
	case "a":
		return "selectAll"
	case "z":
		if c.has(kb.ModifierShift) {
			return "redo"
		}
		return "undo"
	}
	return ""
}

// observeKey finds the element a key goes into (the named one, else the
// focused one) and where pressing the key there leads.
func (s *session) observeKey(ctx context.Context, args map[string]any) *gate.Element {
	key, _ := args["key"].(string)
	c, err := parseChord(key)
	if err != nil {
		return &gate.Element{Err: err}
	}
	el, named, err := s.target(ctx, args)
	if err == nil && !named {
		el, err = s.focused(ctx)
	}
	// The key always lands somewhere: the gate judges that element.
	ef := &gate.Element{Named: true, Label: el.label, Err: err}
	if err == nil {
		ef.DestErr = el.call(ctx, keyDestJS, &ef.Dest, c.activation())
	}
	return ef
}

func actPressKey(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	key, _ := args["key"].(string)
	c, err := parseChord(key)
	if err != nil {
		return output{}, err
	}
	el, named, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	if named {
		if _, err := chromedp.Call(el.in(ctx), dom.Focus, dom.FocusParams{ObjectID: el.object}); err != nil {
			return output{}, fmt.Errorf("%s cannot take focus: %v", el.label, err)
		}
		var focused bool
		if err := el.call(ctx, focusedJS, &focused); err != nil || !focused {
			return output{}, fmt.Errorf("%s did not keep the focus (the page moved it), so the key was not pressed", el.label)
		}
	} else if el, err = s.focused(ctx); err != nil {
		return output{}, err
	}
	// The page may have changed the element since the gate judged it (a
	// focus handler that turns a field into a link): the key must still
	// lead only where the gate judged.
	var now gate.Destination
	if err := el.call(ctx, keyDestJS, &now, c.activation()); err != nil {
		return output{}, err
	}
	if why := unjudged(now, f); why != "" {
		return output{}, fmt.Errorf("%s changed after the gate decided: the key now %s, which the gate did not judge; nothing was pressed", el.label, why)
	}
	if c.opensTab() {
		// As for a modified click (clickWith): what the key would open in
		// a tab of the browser's making is cancelled, for this key only.
		if err := el.call(ctx, noNewTabJS, nil, true); err != nil {
			return output{}, fmt.Errorf("press %s: the page's link opening cannot be held: %w", key, err)
		}
		defer func() { _ = el.call(context.WithoutCancel(ctx), noNewTabJS, nil, false) }()
	}
	for _, ev := range c.events() {
		if _, err := chromedp.Call(el.in(ctx), input.DispatchKeyEvent, *ev); err != nil {
			return output{}, fmt.Errorf("press %s: %w", key, err)
		}
	}
	return output{Text: fmt.Sprintf("pressed %s in %s", pagetext.Value(key), pagetext.Value(el.label))}, nil
}

// unjudged says what an action, as it looks now (now), would do beyond
// what the gate judged of it (f): "" when nothing.
func unjudged(now gate.Destination, f *facts) string {
	var want gate.Destination
	if f != nil && f.Element != nil {
		want = f.Element.Dest
	}
	judged := append([]string{want.URL}, want.URLs...)
	switch {
	case now.Embeds && !want.Embeds:
		return "lands in an embedded document"
	case now.Submits && !want.Submits:
		return "submits a form"
	}
	for _, u := range append([]string{now.URL}, now.URLs...) {
		if u != "" && !slices.Contains(judged, u) {
			return "leads to " + u
		}
	}
	return ""
}
