package daemon

import (
	"html/template"
	"net/http"
)

// homePage is what / shows: where things are. It names nothing that is
// not already public (the routes are documented) and holds no script.
var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>browsergate</title></head>
<body>
<h1>browsergate</h1>
<p>A policy-governed browser for AI agents, over MCP.</p>
<ul>
{{if .Console}}<li><a href="/console/login">The operator console</a>: held calls, sessions and their evidence (sign in with an operator token).</li>
{{else}}<li>The operator console is off: serve it with <code>--operator-token-file</code>.</li>
{{end}}<li><code>/mcp</code>: the MCP endpoint, for agents with their bearer token (streamable HTTP).</li>
{{if .Console}}<li><code>/events</code>: the operators' event stream (a WebSocket, with an operator's bearer token; <code>browsergate events --follow</code>).</li>
<li><code>/metrics</code>: the daemon's gauges (goroutines, heap, open files, sessions, held calls) in Prometheus's text format, with an operator's bearer token.</li>
{{end}}<li><a href="/healthz">/healthz</a>: the health check.</li>
</ul>
</body>
</html>
`))

// home is /: a small page of links, rather than a bare 404.
func (f *Front) home(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	_ = homePage.Execute(w, map[string]bool{"Console": f.console != nil})
}
