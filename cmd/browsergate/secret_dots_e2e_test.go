package main

import (
	"fmt"
	"net/http"
	"testing"
)

// TestSecretTypedIntoATextFieldIsDotsBeforeItIsThere: a secret typed into
// a text field (fields = "text") is drawn as dots before the value is in
// the field, so that no screencast frame (recording = "screencast") nor
// screenshot taken while it is typed shows it. The field's input handler,
// which runs as the value arrives, reports how the field is drawn then.
func TestSecretTypedIntoATextFieldIsDotsBeforeItIsThere(t *testing.T) {
	t.Setenv("BROWSERGATE_TEST_DOTS_PW", "D0tsS3cretVal")
	seen := make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("/f", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>f</title><input type=text id=t
oninput="fetch('/seen?s=' + getComputedStyle(this).webkitTextSecurity)">`)
	})
	mux.HandleFunc("/seen", func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.URL.Query().Get("s"):
		default:
		}
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f := startWith(t, fmt.Sprintf(e2eManifest, "launch", "")+`
[secrets.PW]
env = "BROWSERGATE_TEST_DOTS_PW"
domains = ["127.0.0.1"]
fields = "text"

[tool.evidence]
recording = "screencast"
`)
	f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/f"})
	f.mustAllow(t, "e2e.type_text", map[string]any{"selector": "#t", "text": "<PW>"})
	if s := <-seen; s != "disc" {
		t.Errorf("the text field was drawn with text-security %q as the secret arrived in it, want disc (dots)", s)
	}
}
