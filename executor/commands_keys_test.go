package executor

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
)

func TestParseChord(t *testing.T) {
	for _, tc := range []struct {
		in, key string
		mods    int
		err     string
	}{
		{in: "Enter", key: "Enter"},
		{in: "enter", key: "Enter"},
		{in: "ArrowDown", key: "ArrowDown"},
		{in: "Space", key: " "},
		{in: "a", key: "a"},
		{in: "A", key: "A"},
		{in: "Control+A", key: "a", mods: 1},
		{in: "Ctrl+Shift+z", key: "Z", mods: 2},
		{in: "Shift+Tab", key: "Tab", mods: 1},
		{in: "+", key: "+"},
		{in: "Control++", key: "+", mods: 1},
		{in: "Hyper+A", err: `"Hyper" is not a modifier`},
		{in: "Kaboom", err: `unknown key "Kaboom"`},
	} {
		c, err := parseChord(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if c.key.Key != tc.key || len(c.mods) != tc.mods {
			t.Errorf("%q: key %q with %d modifiers, want %q with %d", tc.in, c.key.Key, len(c.mods), tc.key, tc.mods)
		}
	}
}

// TestChordEvents: modifiers go down before the key and up after it, a
// shortcut sends no text (it types nothing), and Control+A names the
// editor's select-all command.
func TestChordEvents(t *testing.T) {
	c, err := parseChord("Control+A")
	if err != nil {
		t.Fatal(err)
	}
	ev := c.events()
	var got []string
	for _, e := range ev {
		got = append(got, string(e.Type)+":"+e.Key+":"+e.Text)
	}
	want := "rawKeyDown:Control: rawKeyDown:a: keyUp:a: keyUp:Control:"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, " "), want)
	}
	if len(ev[1].Commands) != 1 || ev[1].Commands[0] != "selectAll" {
		t.Errorf("commands %v, want selectAll", ev[1].Commands)
	}
	c, _ = parseChord("Enter")
	if ev := c.events(); len(ev) != 2 || ev[0].Type != input.DispatchKeyEventTypeKeyDown || ev[0].Text != "\r" {
		t.Errorf("Enter: %+v, want a keyDown with text \\r and a keyUp", ev[0])
	}
}
