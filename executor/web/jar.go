package web

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Browser-like bounds of a session's cookie jar (RFC 6265 asks at least
// 50 per domain and 4096 bytes a cookie; Chromium keeps 180 per domain).
const (
	maxCookieBytes     = 4096
	maxCookiesOfDomain = 180
	maxCookies         = 3000
)

// Jar is a session's cookie jar: net/http/cookiejar with the public suffix
// list (a site cannot set a cookie for a whole suffix such as co.uk), and
// bounds a site cannot flood. A cookie over 4096 bytes is dropped; each
// cookie is counted as the jar stores it (domain, path, name), under its
// registrable domain (eTLD+1), and a deletion or an expiry frees its
// count; a registrable domain past 180 cookies, or the session past 3000,
// gets no new ones (those it has are still updated or deleted).
type Jar struct {
	jar     *cookiejar.Jar
	now     func() time.Time
	mu      sync.Mutex
	entries map[cookieKey]time.Time // when each counted cookie expires (zero: at the session's end)
	ofSite  map[string]int          // counted cookies by registrable domain
}

// cookieKey names a cookie as the jar stores it.
type cookieKey struct{ site, domain, path, name string }

// NewJar makes an empty jar.
func NewJar() *Jar {
	j, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // never fails
	return &Jar{jar: j, now: time.Now, entries: map[cookieKey]time.Time{}, ofSite: map[string]int{}}
}

// SetCookies keeps the cookies u's response set, within the bounds.
func (j *Jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	host := strings.ToLower(u.Hostname())
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	var keep []*http.Cookie
	for _, c := range cookies {
		if len(c.Name)+len(c.Value) > maxCookieBytes {
			continue
		}
		k, ok := keyOf(host, u.Path, c)
		if !ok {
			continue // the jar would refuse it: a domain the host is not in, or a public suffix
		}
		switch {
		case c.MaxAge < 0 || !c.Expires.IsZero() && !c.Expires.After(now):
			j.forget(k) // a deletion
		default:
			if _, counted := j.entries[k]; !counted {
				if j.ofSite[k.site] >= maxCookiesOfDomain || len(j.entries) >= maxCookies {
					j.sweep(now)
				}
				if j.ofSite[k.site] >= maxCookiesOfDomain || len(j.entries) >= maxCookies {
					continue
				}
				j.ofSite[k.site]++
			}
			var expires time.Time
			if c.MaxAge > 0 {
				expires = now.Add(time.Duration(c.MaxAge) * time.Second)
			} else if !c.Expires.IsZero() {
				expires = c.Expires
			}
			j.entries[k] = expires
		}
		keep = append(keep, c)
	}
	j.jar.SetCookies(u, keep)
}

// Cookies are the cookies to send to u.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie { return j.jar.Cookies(u) }

func (j *Jar) forget(k cookieKey) {
	if _, ok := j.entries[k]; ok {
		delete(j.entries, k)
		j.ofSite[k.site]--
	}
}

// sweep forgets the counted cookies that have expired.
func (j *Jar) sweep(now time.Time) {
	for k, exp := range j.entries {
		if !exp.IsZero() && !exp.After(now) {
			j.forget(k)
		}
	}
}

// keyOf is where the jar stores c set by host (whose request path is
// reqPath): its domain (the Domain attribute when the host is in it, else
// the host), its path (the Path attribute, else the request path's
// directory), its name; and the registrable domain it counts under.
// ok is false for a cookie the jar refuses.
func keyOf(host, reqPath string, c *http.Cookie) (cookieKey, bool) {
	domain := host
	if d := strings.TrimPrefix(strings.ToLower(c.Domain), "."); d != "" {
		if host != d && !strings.HasSuffix(host, "."+d) {
			return cookieKey{}, false
		}
		if ps, _ := publicsuffix.PublicSuffix(d); ps == d && d != host {
			return cookieKey{}, false
		}
		domain = d
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(domain)
	if err != nil {
		site = domain // an IP address, or a name that is its own suffix
	}
	path := c.Path
	if path == "" || path[0] != '/' {
		path = "/"
		if i := strings.LastIndex(reqPath, "/"); i > 0 {
			path = reqPath[:i]
		}
	}
	return cookieKey{site: site, domain: domain, path: path, name: c.Name}, true
}
