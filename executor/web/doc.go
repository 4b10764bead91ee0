// Package web is the browserless engine's reading of the web: an HTTP
// client that follows redirects by hand, judging every hop (Client), the
// per-host spacing of its requests, by the address dialled (HostLimiter),
// what fetch_page makes of a page (text, links, tables; Document) and the
// two search backends search_web asks (DuckDuckGo's HTML page, SearXNG's
// JSON API).
//
// It holds no policy of its own: the caller gives the Client the scope
// check each URL must pass and the egress gate's dialer every connection
// goes through (scope/egress), so a page fetched here is judged by the
// same rules as one a browser loads.
package web
