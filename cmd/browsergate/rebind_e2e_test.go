package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS rebinding against the browserless engine, with a real DNS server
// the daemon asks through the system's resolver: inside a private network
// namespace (inNetns), each name answers, lookup after lookup, an allowed
// public-looking address and then a forbidden one (TTL 0). Each address is
// served there: a site on the public ones, a canary counting every TCP
// connection on the forbidden ones.

// rebindName is a name whose answers alternate: public first.
type rebindName struct {
	name            string
	public, private string
}

var rebindNames = []rebindName{
	{"rebind.test", "11.0.0.1", "10.0.0.1"},
	{"hop.test", "11.0.0.2", "169.254.169.254"},
	{"keep.test", "11.0.0.3", "127.0.0.1"},
	{"search.test", "11.0.0.4", "192.168.0.1"},
}

// rebindDNS is the alternating DNS server: it counts, per name, the A
// lookups it answered with each address.
type rebindDNS struct {
	mu      sync.Mutex
	lookups map[string]int            // A queries per name
	answers map[string]map[string]int // name -> address -> times given
}

func (d *rebindDNS) answer(name string) (netip.Addr, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range rebindNames {
		if n.name+"." == name {
			d.lookups[n.name]++
			a := n.public
			if d.lookups[n.name]%2 == 0 {
				a = n.private
			}
			d.answers[n.name][a]++
			return netip.MustParseAddr(a), true
		}
	}
	return netip.Addr{}, false
}

func (d *rebindDNS) given(name, addr string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.answers[name][addr]
}

// serveRebindDNS answers UDP queries on addr: A records of rebindNames
// alternating (TTL 0), no other records, NXDOMAIN for other names.
func serveRebindDNS(t *testing.T, addr string) *rebindDNS {
	t.Helper()
	d := &rebindDNS{lookups: map[string]int{}, answers: map[string]map[string]int{}}
	for _, n := range rebindNames {
		d.answers[n.name] = map[string]int{}
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			known := false
			for _, rn := range rebindNames {
				known = known || q.Name.String() == rn.name+"."
			}
			var a netip.Addr
			if q.Type == dnsmessage.TypeA && known {
				a, _ = d.answer(q.Name.String())
			}
			hdr := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true}
			if !known {
				hdr.RCode = dnsmessage.RCodeNameError
			}
			resp := dnsmessage.NewBuilder(nil, hdr)
			_ = resp.StartQuestions()
			_ = resp.Question(q)
			_ = resp.StartAnswers()
			if a.IsValid() {
				_ = resp.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: a.As4()})
			}
			out, err := resp.Finish()
			if err == nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	return d
}

// countingListener counts the TCP connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestWebEngineDNSRebinding: fetch_page, download_file, search_web and a
// redirect's hop, against names whose DNS answers alternate between an
// allowed address and a forbidden one with TTL 0. Each connection is made
// to the address its own single lookup gave and the gate checked: every
// public answer is exactly one connection to the public site, every
// private answer exactly one refusal naming it, and the canaries on the
// private addresses (a 10/8 address, the metadata address, loopback, a
// 192.168/16 one) see no connection at all. A connection kept alive is
// used again without a lookup: it still goes to the address checked when
// it was made, never to the private answer the next lookup would give.
func TestWebEngineDNSRebinding(t *testing.T) {
	var addrs []string
	for _, n := range rebindNames {
		addrs = append(addrs, n.public+"/32")
		if n.private != "127.0.0.1" {
			addrs = append(addrs, n.private+"/32")
		}
	}
	if !inNetns(t, addrs, "127.0.0.53") {
		return
	}
	dns := serveRebindDNS(t, "127.0.0.53:53")

	site := http.NewServeMux()
	site.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<title>page of %s</title><p>served by %s</p>", r.Host, r.Context().Value(http.LocalAddrContextKey))
	})
	site.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	site.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "file of "+r.Host)
	})
	site.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{{"url": "http://rebind.test/page", "title": "found", "content": "x"}}})
	})
	conns := map[string]*atomic.Int64{}
	canary := map[string]*atomic.Int64{}
	listen := func(addr string, counts map[string]*atomic.Int64, h http.Handler) {
		ln, err := net.Listen("tcp", addr+":80")
		if err != nil {
			t.Fatal(err)
		}
		counts[addr] = &atomic.Int64{}
		srv := &http.Server{Handler: h}
		go srv.Serve(countingListener{ln, counts[addr]})
		t.Cleanup(func() { srv.Close() })
	}
	for _, n := range rebindNames {
		listen(n.public, conns, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.name != "keep.test" {
				// Every request its own connection, so its own lookup.
				w.Header().Set("Connection", "close")
			}
			site.ServeHTTP(w, r)
		}))
		listen(n.private, canary, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<title>CANARY</title>")
		}))
	}

	downloads := filepath.Join(t.TempDir(), "downloads")
	if err := os.Mkdir(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, fmt.Sprintf(`
[tool]
name = "web"
timeout_seconds = 10
[browser]
engine = "http"
max_interactions = 100000
[browser.scope]
allowed_domains = ["rebind.test", "hop.test", "keep.test", "search.test"]
requests_per_second_per_host = 0
[browser.files]
download_dir = %q
[browser.search]
backend = "searxng"
url = "http://search.test/search"
[browser.commands.fetch_page]
[browser.commands.search_web]
[browser.commands.download_file]
`, downloads))

	type step struct {
		tool    string
		args    map[string]any
		refused string // "": allowed; else the name whose private answer refuses it
	}
	fetch := func(u string) map[string]any { return map[string]any{"url": u} }
	hop := "http://rebind.test/redirect?to=" + "http%3A%2F%2Fhop.test%2Fpage"
	steps := []step{
		// rebind.test: public, private, public, private, ...
		{"web.fetch_page", fetch("http://rebind.test/page"), ""},
		{"web.fetch_page", fetch("http://rebind.test/page"), "rebind.test"},
		{"web.download_file", map[string]any{"url": "http://rebind.test/file", "filename": "one.bin"}, ""},
		{"web.download_file", map[string]any{"url": "http://rebind.test/file", "filename": "two.bin"}, "rebind.test"},
		// The redirect's hop, to hop.test: public, then private.
		{"web.fetch_page", fetch(hop), ""},
		{"web.fetch_page", fetch(hop), "rebind.test"},
		{"web.fetch_page", fetch(hop), "hop.test"},
		// The search backend.
		{"web.search_web", map[string]any{"query": "q"}, ""},
		{"web.search_web", map[string]any{"query": "q"}, "search.test"},
		// keep.test keeps its connection: one lookup (public), then the
		// connection is used again, and the private answer never asked.
		{"web.fetch_page", fetch("http://keep.test/page"), ""},
		{"web.fetch_page", fetch("http://keep.test/page"), ""},
		{"web.fetch_page", fetch("http://keep.test/page"), ""},
	}
	refusals := map[string]int{}
	for i, s := range steps {
		out, refused := f.call(t, s.tool, s.args)
		switch {
		case s.refused == "" && refused:
			t.Errorf("step %d, %s %v: refused, want allowed:\n%s", i+1, s.tool, s.args, out)
		case s.refused != "" && !refused:
			t.Errorf("step %d, %s %v: allowed, want refused at %s's private answer:\n%s", i+1, s.tool, s.args, s.refused, out)
		case refused:
			want := ""
			for _, n := range rebindNames {
				if n.name == s.refused {
					want = fmt.Sprintf("host %s resolves to %s", n.name, n.private)
				}
			}
			if !strings.Contains(out, want) || !strings.Contains(out, "egress gate") {
				t.Errorf("step %d: the refusal does not say %q:\n%s", i+1, want, out)
			}
			refusals[s.refused]++
		case s.tool == "web.fetch_page" && !strings.Contains(out, "page of "):
			t.Errorf("step %d: not the site's page:\n%s", i+1, out)
		}
	}
	for _, n := range rebindNames {
		pub, priv := dns.given(n.name, n.public), dns.given(n.name, n.private)
		if got := conns[n.public].Load(); got != int64(pub) {
			t.Errorf("%s: %d public answer(s), %d connection(s) to %s: want one connection per lookup", n.name, pub, got, n.public)
		}
		if priv != refusals[n.name] {
			t.Errorf("%s: %d private answer(s), %d refusal(s): want one refusal per private answer", n.name, priv, refusals[n.name])
		}
		if got := canary[n.private].Load(); got != 0 {
			t.Errorf("LEAK: %d connection(s) reached %s (%s's private answer)", got, n.private, n.name)
		}
	}
	if n := dns.given("keep.test", "11.0.0.3"); n != 1 || dns.given("keep.test", "127.0.0.1") != 0 {
		t.Errorf("keep.test was looked up %d time(s) (public) and %d (private): the kept connection was not used again, so its case proved nothing",
			n, dns.given("keep.test", "127.0.0.1"))
	}
	t.Logf("A lookups answered: %v", dns.answers)
}
