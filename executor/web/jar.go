package web

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"
)

// Browser-like bounds of a session's cookie jar (RFC 6265 asks at least
// 50 per domain and 4096 bytes a cookie; Chromium keeps 180 per domain).
const (
	maxCookieBytes   = 4096
	maxCookiesOfHost = 180
	maxCookies       = 3000
)

// Jar is a session's cookie jar: net/http/cookiejar with the public suffix
// list (a site cannot set a cookie for a whole suffix such as co.uk), and
// bounds a site cannot flood: a cookie over 4096 bytes is dropped, and a
// host setting more than 180 cookies, or the session more than 3000, gets
// no new ones (the ones it has are still updated).
type Jar struct {
	jar   *cookiejar.Jar
	mu    sync.Mutex
	names map[string]map[string]bool // host -> cookie names it set
	total int
}

// NewJar makes an empty jar.
func NewJar() *Jar {
	j, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // never fails
	return &Jar{jar: j, names: map[string]map[string]bool{}}
}

// SetCookies keeps the cookies u's response set, within the bounds.
func (j *Jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	host := strings.ToLower(u.Hostname())
	j.mu.Lock()
	defer j.mu.Unlock()
	names := j.names[host]
	if names == nil {
		names = map[string]bool{}
		j.names[host] = names
	}
	var keep []*http.Cookie
	for _, c := range cookies {
		if len(c.Name)+len(c.Value) > maxCookieBytes {
			continue
		}
		if !names[c.Name] {
			if len(names) >= maxCookiesOfHost || j.total >= maxCookies {
				continue
			}
			names[c.Name] = true
			j.total++
		}
		keep = append(keep, c)
	}
	j.jar.SetCookies(u, keep)
}

// Cookies are the cookies to send to u.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie { return j.jar.Cookies(u) }
