package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestClickRepliesFromWhereItLeads: a click that takes the tab to another
// page returns once that page has loaded and settled, and its reply's
// state is of the page the tab then shows: a page that moves on as it
// loads (location.replace on its load event) is followed to where it
// goes, and a page that fetches data once loaded and then renders it
// over several steps is shown rendered, not as it was before the data
// came (the DOM is waited for again after the network went quiet).
func TestClickRepliesFromWhereItLeads(t *testing.T) {
	t.Parallel()
	f := start(t, "launch", "")
	pages := map[string]string{
		"/from": `<title>from</title><a id=onload href="/onload">on load</a> <a id=fetch href="/fetch">fetch</a>`,
		"/onload": `<title>moving on</title>
<script>addEventListener("load", () => location.replace("/landed"))</script>`,
		"/landed": `<title>landed</title><p>landed</p>`,
		// The data takes 150 ms; the page then changes its DOM every
		// 10 ms for 120 ms before it sets its title.
		"/fetch": `<title>before the data</title><ul id=list></ul>
<script>addEventListener("load", () => fetch("/data").then(r => r.text()).then(() => {
  let n = 0;
  const step = () => {
    document.getElementById("list").append(Object.assign(document.createElement("li"), {textContent: "row " + n}));
    if (++n < 12) { setTimeout(step, 10); } else { document.title = "rendered"; }
  };
  step();
}))</script>`,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.Write([]byte("data"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(pages[r.URL.Path]))
	})
	site, stop, err := serveOn("127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	for _, c := range []struct{ link, want string }{
		{"#onload", `url="` + site + `/landed" title="landed"`},
		{"#fetch", `title="rendered"`},
	} {
		f.mustAllow(t, "e2e.navigate", map[string]any{"url": site + "/from"})
		reply := f.mustAllow(t, "e2e.click", map[string]any{"selector": c.link})
		if !strings.Contains(reply, c.want) {
			t.Errorf("click %s: the reply's state is not of the settled page (want %s):\n%s", c.link, c.want, reply)
		}
	}
}
