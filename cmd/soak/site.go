package main

import (
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
)

// The soak's web site, on loopback: pages that do what long-lived web apps
// do to a browser (build big subtrees and drop them, keep closures and
// listeners, timers that touch the DOM), a file to download, and a page
// that starts a download by itself.

// appPage builds a table of 3000 rows with a listener and a closure each,
// lays it out, detaches it and keeps the last five such trees (an app's
// cache of views); Rebuild does it again. A timer updates a line every
// half second, as a clock or a feed would.
const appPage = `<!doctype html>
<title>soak app %[1]s</title>
<h1>Orders of %[1]s</h1>
<button id=rebuild>Rebuild</button>
<p id=status>building</p>
<ul id=list></ul>
<script>
const views = [];
let rebuilds = 0;
function buildView(rows) {
  const root = document.createElement('div');
  for (let i = 0; i < rows; i++) {
    const row = document.createElement('div');
    row.className = 'row';
    row.textContent = 'row ' + i + ' of view ' + rebuilds;
    const payload = new Array(64).fill(i);
    row.addEventListener('click', () => payload.length);
    root.append(row);
  }
  return root;
}
function rebuild() {
  const view = buildView(3000);
  document.body.append(view);
  view.getBoundingClientRect();
  view.remove();
  views.push(view);
  if (views.length > 5) views.shift();
  rebuilds++;
  const items = [];
  for (let i = 0; i < 20; i++) {
    const li = document.createElement('li');
    li.textContent = 'order ' + (rebuilds * 20 + i);
    items.push(li);
  }
  document.getElementById('list').replaceChildren(...items);
  document.getElementById('status').textContent = 'rebuilt ' + rebuilds + ' times';
}
document.getElementById('rebuild').addEventListener('click', rebuild);
window.addEventListener('resize', () => views.length);
let ticks = 0;
setInterval(() => { document.title = 'soak app %[1]s (' + (++ticks) + ')'; }, 500);
rebuild();
</script>
`

// tabPage is what a new tab opens: a short page.
const tabPage = `<!doctype html><title>soak tab %[1]s</title><h1>Tab %[1]s</h1><p>A page opened in a tab of its own.</p><a href="/app?n=%[1]s">back to the app</a>`

// startingDownloadPage clicks, as it loads, a link to an attachment: a
// download the page starts, not the agent.
const startingDownloadPage = `<!doctype html><title>soak export %[1]s</title><p>Your export is starting.</p>
<a id=file href="/file?n=%[1]s.csv">the export</a>
<script>document.getElementById('file').click()</script>`

// fileBytes is the size of each downloaded file.
const fileBytes = 16 << 10

// siteHandler serves the soak's pages: /app?n=, /tab?n=, /export?n=
// (a page that starts a download) and /file?n=NAME (an attachment named
// NAME).
func siteHandler() http.Handler {
	mux := http.NewServeMux()
	page := func(format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, format, html.EscapeString(r.URL.Query().Get("n")))
		}
	}
	mux.Handle("GET /app", page(appPage))
	mux.Handle("GET /tab", page(tabPage))
	mux.Handle("GET /export", page(startingDownloadPage))
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		name := safeName(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Content-Length", fmt.Sprint(fileBytes))
		line := strings.Repeat(name+" ", 1+64/(len(name)+1)) + "\n"
		for written := 0; written < fileBytes; written += len(line) {
			chunk := line
			if rest := fileBytes - written; rest < len(chunk) {
				chunk = chunk[:rest]
			}
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

// safeName keeps a file name to letters, digits, dots and dashes, so that
// a header cannot be broken by it.
func safeName(n string) string {
	var b strings.Builder
	for _, r := range n {
		if r < 128 && (r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "file"
	}
	return b.String()
}

// serveSite serves the site on a port of 127.0.0.1 the system chooses;
// stop ends it.
func serveSite() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: siteHandler()}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
