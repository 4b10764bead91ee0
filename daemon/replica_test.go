package daemon

import (
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/toolclad"
)

// TestCheckReplica: a replica id is a lower-case letter and up to 15
// lower-case letters or digits; anything else is refused with
// ErrBadReplica, naming the id.
func TestCheckReplica(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"r1", true},
		{"a", true},
		{"eu2west", true},
		{"abcdefghijklmnop", true}, // 16
		{"abcdefghijklmnopq", false},
		{"", false},
		{"R1", false},
		{"1r", false},
		{"r-1", false}, // a dash would make "r-" match r's and r-1's ids
		{"r_1", false},
		{"r1 ", false},
		{"r\u00e9", false},
	} {
		err := CheckReplica(c.id)
		if (err == nil) != c.ok || err != nil && (!errors.Is(err, ErrBadReplica) || !strings.Contains(err.Error(), `"`+c.id+`"`)) {
			t.Errorf("CheckReplica(%q) = %v, want ok %v", c.id, err, c.ok)
		}
	}
}

// TestSessionIDsNameTheReplica: every id starts with the replica and a
// dash, then 26 base32 characters (130 random bits), and no two are the
// same.
func TestSessionIDsNameTheReplica(t *testing.T) {
	t.Parallel()
	next := SessionIDs("r7")
	shape := regexp.MustCompile(`^r7-[A-Z2-7]{26}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := next()
		if !shape.MatchString(id) || seen[id] {
			t.Fatalf("id %q: not r7-<26 base32> or seen before", id)
		}
		seen[id] = true
	}
}

// TestReplicaNamedByHealthAndMetrics: with a replica, /healthz says which
// answered and /metrics carries browsergate_replica_info; without one,
// /healthz says ok alone and the info metric is not there.
func TestReplicaNamedByHealthAndMetrics(t *testing.T) {
	t.Parallel()
	ops, err := toolclad.ParseOperators("ops", []byte("olga:"+olgaToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, replica := range []string{"r2", ""} {
		f := serve(t, Config{Agents: func() *toolclad.Agents { return nil }, Operators: func() *toolclad.Operators { return ops },
			Events: events.NewHub(0), Replica: replica})
		res, err := http.Get(f.URL() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want := "ok\n"
		if replica != "" {
			want = "ok replica " + replica + "\n"
		}
		if res.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("replica %q: /healthz %d %q, want %q", replica, res.StatusCode, body, want)
		}
		_, _, metrics := scrape(t, f, olgaToken)
		info := `browsergate_replica_info{replica="` + replica + `"} 1` + "\n"
		if has := strings.Contains(metrics, info); has != (replica != "") || replica == "" && strings.Contains(metrics, "browsergate_replica_info") {
			t.Errorf("replica %q: /metrics has the info metric: %v\n%s", replica, has, metrics)
		}
	}
}

// TestListenRefusesABadReplica: the front is not opened with a replica id
// CheckReplica refuses.
func TestListenRefusesABadReplica(t *testing.T) {
	t.Parallel()
	f, err := Listen(Config{Addr: "127.0.0.1:0", Server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil),
		Agents: func() *toolclad.Agents { return nil }, Replica: "R1"})
	if !errors.Is(err, ErrBadReplica) {
		if f != nil {
			f.ln.Close()
		}
		t.Fatalf("Listen with replica R1: %v, want ErrBadReplica", err)
	}
}
