package daemon

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Replicas: several daemons behind one load balancer (serve --replica).
// Each names the MCP sessions it opens after itself, so that the load
// balancer sends every later request of a session to the replica that
// holds it by reading the Mcp-Session-Id header alone: no table to share,
// no cookie, nothing the client must do besides sending the header the
// protocol asks of it (docs/fleet.md).

// replicaName is what a replica id may be: short, and only characters a
// session id, a log field, a metric label and a load balancer's match on
// the header's start all take as they are.
var replicaName = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)

// ErrBadReplica refuses a replica id that is not a lower-case letter
// followed by at most 15 lower-case letters and digits.
var ErrBadReplica = errors.New("a replica id is a lower-case letter followed by at most 15 lower-case letters or digits (r1, eu2)")

// CheckReplica says whether id may name a replica.
func CheckReplica(id string) error {
	if !replicaName.MatchString(id) {
		return fmt.Errorf("--replica %q: %w", id, ErrBadReplica)
	}
	return nil
}

// SessionIDs is the MCP server's session id maker of replica
// (mcp.ServerOptions.GetSessionID): ID-<26 base32 characters from
// crypto/rand>, 130 random bits, as unguessable as the SDK's own ids,
// which are the part after the dash. The id never ends with a dash, so a
// load balancer's match on "ID-" is one replica's ids alone.
func SessionIDs(replica string) func() string {
	return func() string { return replica + "-" + rand.Text() }
}

// foreignSessions logs a request whose session id another replica handed
// out: the load balancer sent it here because that replica is down (or
// its rules are wrong). The request goes on to the MCP handler, which
// answers it as any unknown session: 404, after which an MCP client
// opens a new session (MCP's streamable HTTP transport, "Session
// Management"). Only an agent's request gets here (the token is checked
// first), so the line cannot be had for nothing.
func (f *Front) foreignSessions(next http.Handler) http.Handler {
	if f.cfg.Replica == "" {
		return next
	}
	own := f.cfg.Replica + "-"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && !strings.HasPrefix(id, own) {
			other, _, named := strings.Cut(id, "-")
			if !named || !replicaName.MatchString(other) {
				other = ""
			}
			agent := ""
			if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
				agent = ti.UserID
			}
			f.cfg.Logger.Warn("http: a request for a session of another replica: it is answered 404 (session not found), as any session this replica does not hold",
				"session_replica", other, "agent", agent, "remote", r.RemoteAddr, "method", r.Method)
		}
		next.ServeHTTP(w, r)
	})
}
