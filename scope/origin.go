package scope

import (
	"fmt"
	"strconv"
)

// Origin is a URL's scheme, canonical host and port (its explicit port, or
// the scheme's default): what a human's approval of a navigate outside
// allowed_domains makes reachable, and nothing wider. Two URLs that differ
// in any of the three are different origins, as they are to the browser's
// same-origin policy: approving https://example.org does not approve
// http://example.org, example.org:8443 or www.example.org.
type Origin struct {
	Scheme string
	Host   string
	Port   uint16
}

// String is the origin as a URL without a path, with its port always
// written ("https://example.org:443"), so that a reader never has to know
// the scheme's default to tell two origins apart.
func (o Origin) String() string {
	return o.Scheme + "://" + o.Host + ":" + strconv.Itoa(int(o.Port))
}

// OriginOf reads rawURL as Check does and returns its origin. Only http
// and https URLs with a host have one here: a WebSocket URL, about:blank
// and every other scheme is an error (ErrInvalidURL), so that no approval
// can be made to cover them.
func OriginOf(rawURL string) (Origin, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return Origin{}, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Origin{}, fmt.Errorf("%w: %s has no http or https origin", ErrInvalidURL, quoteShort(rawURL))
	}
	port := urlPort(u)
	if port == 0 {
		return Origin{}, fmt.Errorf("%w: %s has no port a connection can be made to", ErrInvalidPort, quoteShort(rawURL))
	}
	return Origin{Scheme: u.Scheme, Host: u.Host, Port: port}, nil
}
