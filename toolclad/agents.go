package toolclad

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"

	"github.com/pelletier/go-toml/v2"
)

// An agents file names the agents that may call a daemon served over HTTP
// (serve --http --agents FILE), each with the SHA-256 of its bearer token
// and the groups it is in:
//
//	[agents.alice]
//	token_sha256 = "<hex SHA-256 of alice's bearer token>"
//	groups = ["research"]
//
// The agent's id is its Cedar principal (Web::Agent::"alice") and its
// groups are the principal's parents (Web::AgentGroup::"research"). The
// file holds no token, only hashes: reading it does not let one call.

// Agent is one agent of an agents file.
type Agent struct {
	ID     string
	Groups []string
	hash   [sha256.Size]byte
}

// Agents are the agents of an agents file.
type Agents struct {
	Path string
	list []*Agent // by id
}

// agentIDPattern is what an agent or group id may be: it names a Cedar
// entity, an evidence field and a log attribute, so it is kept plain.
var agentIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// LoadAgents reads and checks the agents file at path. A file that is
// wrong in any way yields a *LoadError listing every problem.
func LoadAgents(path string) (*Agents, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load agents: %w", err)
	}
	return ParseAgents(path, doc)
}

// ParseAgents checks an agents file held in memory; name is the file name
// its problems give.
func ParseAgents(name string, doc []byte) (*Agents, error) {
	var root map[string]any
	if err := toml.Unmarshal(doc, &root); err != nil {
		return nil, &LoadError{Problems: []Problem{syntaxProblem(name, err)}}
	}
	r := &reader{file: name, pos: indexPositions(doc)}
	top := r.table(nil, root)
	as := &Agents{Path: name}
	agents := top.sub("agents")
	ids := make([]string, 0, len(agents.m))
	for id := range agents.m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		r.errorf(keyPath{"agents"}, "no [agents.<id>] table: the file names no agent, so no call could be made")
	}
	byHash := map[[sha256.Size]byte]string{}
	for _, id := range ids {
		t := agents.sub(id)
		a := &Agent{ID: id}
		if !agentIDPattern.MatchString(id) {
			r.errorf(t.path, "agent id %q: want 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", id)
		}
		var hexHash string
		if !t.str("token_sha256", &hexHash) {
			if !t.has("token_sha256") {
				r.errorf(t.path, "missing token_sha256: the hex SHA-256 of the agent's bearer token (printf %%s \"$TOKEN\" | sha256sum)")
			}
		} else if b, err := hex.DecodeString(hexHash); err != nil || len(b) != sha256.Size {
			r.errorf(t.at("token_sha256"), "want the 64 hex digits of a SHA-256, got %d characters", len(hexHash))
		} else {
			copy(a.hash[:], b)
			if other, dup := byHash[a.hash]; dup {
				r.errorf(t.at("token_sha256"), "the same token as agent %q: each agent needs a token of its own, or calls could not be told apart", other)
			}
			byHash[a.hash] = id
		}
		t.strings("groups", &a.Groups)
		for _, g := range a.Groups {
			if !agentIDPattern.MatchString(g) {
				r.errorf(t.at("groups"), "group %q: want 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", g)
			}
		}
		slices.Sort(a.Groups)
		a.Groups = slices.Compact(a.Groups)
		t.done()
		as.list = append(as.list, a)
	}
	agents.done()
	top.done()
	if len(r.problems) > 0 {
		sortProblems(r.problems)
		return nil, &LoadError{Problems: r.problems}
	}
	return as, nil
}

// Lookup returns the agent whose token this is (nil: none). Every agent's
// hash is compared, in constant time, whichever matches.
func (as *Agents) Lookup(token string) *Agent {
	if as == nil || token == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(token))
	var found *Agent
	for _, a := range as.list {
		if subtle.ConstantTimeCompare(sum[:], a.hash[:]) == 1 {
			found = a
		}
	}
	return found
}

// IDs are the agents' ids, sorted.
func (as *Agents) IDs() []string {
	out := make([]string, len(as.list))
	for i, a := range as.list {
		out[i] = a.ID
	}
	return out
}

// TokenHash is the hex SHA-256 of a token, as an agents file holds it.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
