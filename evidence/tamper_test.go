package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// tamper edits the closed evidence file at path with bbolt directly, as an
// attacker with write access to the file would.
func tamper(t *testing.T, path string, edit func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(edit); err != nil {
		t.Fatalf("tamper: %v", err)
	}
}

func key(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func chain(tx *bolt.Tx, session string) *bolt.Bucket {
	return tx.Bucket([]byte("sessions")).Bucket([]byte(session))
}

// recordsOf reads the envelopes of a session straight from the file.
func recordsOf(tx *bolt.Tx, session string) map[uint64]*evidence.Envelope {
	out := map[uint64]*evidence.Envelope{}
	_ = chain(tx, session).ForEach(func(k, v []byte) error {
		var e evidence.Envelope
		if err := json.Unmarshal(v, &e); err == nil {
			out[binary.BigEndian.Uint64(k)] = &e
		}
		return nil
	})
	return out
}

// tamperFixture writes session s1 (5 records, record 3 with a screenshot)
// and session s2 (2 records), closes the store and returns the file path.
// With key, every head is signed.
func tamperFixture(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second), SigningKey: key})
	for i := 1; i <= 5; i++ {
		var shot []byte
		if i == 3 {
			shot = []byte("\x89PNG screenshot of record 3")
		}
		if err := s.Append(envelope("s1", fmt.Sprintf("https://a.example.com/%d", i)), shot); err != nil {
			t.Fatal(err)
		}
		if i <= 2 {
			if err := s.Append(envelope("s2", fmt.Sprintf("https://b.example.com/%d", i)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type wantProblem struct {
	session string
	seq     uint64
	reason  string // substring of Problem.Reason
}

// TestVerifyDetectsTampering edits a log as someone with write access to
// the file but without the signing key would, and checks that Verify
// names the record concerned; then the same edits on a log with signed
// heads, checked by VerifyWithKey, which must still find every one. After
// each edit the log-wide head is recomputed (relog), as that someone
// would: these are the checks of each session's own chain.
func TestVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(t *testing.T, tx *bolt.Tx) error
		first wantProblem   // Report.FirstBad (unsigned log)
		also  []wantProblem // further problems that must be reported
		// signed are further problems VerifyWithKey must report on the
		// signed log (the edit rewrote a head).
		signed []wantProblem
	}{
		{
			name: "byte flipped in a stored record",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				v := bytes.Clone(chain(tx, "s1").Get(key(3)))
				i := bytes.Index(v, []byte("navigated to"))
				v[i] = 'N'
				return chain(tx, "s1").Put(key(3), v)
			},
			first: wantProblem{"s1", 3, "hash mismatch"},
		},
		{
			name: "record re-encoded with whitespace",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				var buf bytes.Buffer
				if err := json.Indent(&buf, chain(tx, "s1").Get(key(2)), "", " "); err != nil {
					return err
				}
				return chain(tx, "s1").Put(key(2), buf.Bytes())
			},
			first: wantProblem{"s1", 2, "not in canonical form"},
		},
		{
			name: "middle record deleted",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				return chain(tx, "s1").Delete(key(3))
			},
			first: wantProblem{"s1", 4, "gap in sequence: expected 3, found 4"},
			also:  []wantProblem{{"s1", 4, "prev_hash mismatch"}},
		},
		{
			name: "last record deleted",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				return chain(tx, "s1").Delete(key(5))
			},
			first: wantProblem{"s1", 5, "head is ahead of the last record"},
		},
		{
			name: "forged record appended without the head",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				last := recordsOf(tx, "s1")[5]
				forged := envelope("s1", "https://evil.example.net/")
				forged.Version, forged.Seq, forged.PrevHash, forged.Time = 1, 6, last.Hash, last.Time
				return chain(tx, "s1").Put(key(6), storedForm(t, forged))
			},
			first: wantProblem{"s1", 6, "records after the head"},
		},
		{
			name: "forged record inserted in the middle",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				recs := recordsOf(tx, "s1")
				b := chain(tx, "s1")
				for seq := uint64(5); seq >= 3; seq-- { // shift 3..5 to 4..6
					if err := b.Put(key(seq+1), bytes.Clone(b.Get(key(seq)))); err != nil {
						return err
					}
				}
				forged := envelope("s1", "https://evil.example.net/")
				forged.Version, forged.Seq, forged.PrevHash, forged.Time = 1, 3, recs[2].Hash, recs[2].Time
				if err := b.Put(key(3), storedForm(t, forged)); err != nil {
					return err
				}
				h := fmt.Sprintf(`{"hash":%q,"seq":6}`, recs[5].Hash)
				return tx.Bucket([]byte("heads")).Put([]byte("s1"), []byte(h))
			},
			first:  wantProblem{"s1", 4, "its seq is 3"},
			also:   []wantProblem{{"s1", 4, "prev_hash mismatch"}, {"s1", 6, "its seq is 5"}},
			signed: []wantProblem{{"s1", 0, "head (seq 6) is not signed"}},
		},
		{
			name: "two records swapped",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				b := chain(tx, "s1")
				two, three := bytes.Clone(b.Get(key(2))), bytes.Clone(b.Get(key(3)))
				if err := b.Put(key(2), three); err != nil {
					return err
				}
				return b.Put(key(3), two)
			},
			first: wantProblem{"s1", 2, "its seq is 3"},
			also:  []wantProblem{{"s1", 2, "prev_hash mismatch"}, {"s1", 3, "its seq is 2"}},
		},
		{
			name: "record moved to another session",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				return chain(tx, "s2").Put(key(2), bytes.Clone(chain(tx, "s1").Get(key(2))))
			},
			first: wantProblem{"s2", 2, `names session "s1"`},
		},
		{
			name: "screenshot altered",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				hash := recordsOf(tx, "s1")[3].ScreenshotSHA256
				return tx.Bucket([]byte("screenshots")).Put([]byte(hash), []byte("\x89PNG another image"))
			},
			first: wantProblem{"s1", 3, "bytes do not match their hash"},
		},
		{
			name: "screenshot deleted",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				hash := recordsOf(tx, "s1")[3].ScreenshotSHA256
				return tx.Bucket([]byte("screenshots")).Delete([]byte(hash))
			},
			first: wantProblem{"s1", 3, "missing"},
		},
		{
			name: "head deleted",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				return tx.Bucket([]byte("heads")).Delete([]byte("s2"))
			},
			first: wantProblem{"s2", 2, "records without head"},
		},
		{
			name: "records deleted, head kept",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				return tx.Bucket([]byte("sessions")).DeleteBucket([]byte("s2"))
			},
			first: wantProblem{"s2", 2, "head without records"},
		},
	}
	for _, tt := range tests {
		unsignedAndSigned(t, tt.name, func(t *testing.T, key ed25519.PrivateKey) {
			signed := key != nil
			path := tamperFixture(t, key)
			tamper(t, path, func(tx *bolt.Tx) error {
				if err := tt.edit(t, tx); err != nil {
					return err
				}
				relog(t, tx)
				return nil
			})

			rep := verifyFile(t, path, key)
			if rep.OK() {
				t.Fatal("Verify reported no problem")
			}
			want := tt.also
			if signed && rep.Signed == 0 {
				t.Error("the signed fixture has no signed head")
			}
			if signed {
				// A rewritten head adds a problem about the session
				// (seq 0), which sorts first: check presence only.
				want = append(append([]wantProblem{tt.first}, tt.also...), tt.signed...)
			} else {
				first, _ := rep.FirstBad()
				if !matches(first, tt.first) {
					t.Errorf("FirstBad = %q, want session %s record %d: …%s…", first, tt.first.session, tt.first.seq, tt.first.reason)
				}
				prefix := fmt.Sprintf("session %s record %d: ", tt.first.session, tt.first.seq)
				if !strings.HasPrefix(first.String(), prefix) {
					t.Errorf("String() = %q, want prefix %q", first.String(), prefix)
				}
			}
			for _, w := range want {
				if !hasProblem(rep, w) {
					t.Errorf("no problem session %s record %d: …%s…; got %q", w.session, w.seq, w.reason, rep.Problems)
				}
			}
		})
	}
}

// unsignedAndSigned runs f as the parallel subtests name (no key) and
// "signed/"+name (testKey(1)).
func unsignedAndSigned(t *testing.T, name string, f func(t *testing.T, key ed25519.PrivateKey)) {
	for _, key := range []ed25519.PrivateKey{nil, testKey(1)} {
		n := name
		if key != nil {
			n = "signed/" + name
		}
		t.Run(n, func(t *testing.T) {
			t.Parallel()
			f(t, key)
		})
	}
}

// verifyFile verifies the closed evidence file at path: with key's public
// half (VerifyWithKey) when key is set, with Verify otherwise.
func verifyFile(t *testing.T, path string, key ed25519.PrivateKey) *evidence.Report {
	t.Helper()
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rep *evidence.Report
	if key != nil {
		rep, err = s.VerifyWithKey(key.Public().(ed25519.PublicKey))
	} else {
		rep, err = s.Verify()
	}
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

// deleteSession removes a session's records and its head, and nothing
// else, as someone who can write the file would.
func deleteSession(tx *bolt.Tx, id string) error {
	if err := tx.Bucket([]byte("sessions")).DeleteBucket([]byte(id)); err != nil {
		return err
	}
	return tx.Bucket([]byte("heads")).Delete([]byte(id))
}

func hasProblem(rep *evidence.Report, w wantProblem) bool {
	for _, p := range rep.Problems {
		if matches(p, w) {
			return true
		}
	}
	return false
}

func matches(p evidence.Problem, w wantProblem) bool {
	return p.Session == w.session && p.Seq == w.seq && strings.Contains(p.Reason, w.reason)
}

func TestVerifyIntactLog(t *testing.T) {
	t.Parallel()
	path := tamperFixture(t, nil)
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Sessions != 2 || rep.Records != 7 {
		t.Fatalf("report = %+v", rep)
	}
	if _, bad := rep.FirstBad(); bad {
		t.Error("FirstBad on an intact log")
	}
}

func TestAppendRefusesDamagedChain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		session string
		edit    func(tx *bolt.Tx) error
	}{
		{"head without records", "s2", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("sessions")).DeleteBucket([]byte("s2"))
		}},
		{"records without head", "s2", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("heads")).Delete([]byte("s2"))
		}},
		{"last record removed", "s1", func(tx *bolt.Tx) error {
			return chain(tx, "s1").Delete(key(5))
		}},
		{"record already at the next seq", "s1", func(tx *bolt.Tx) error {
			return chain(tx, "s1").Put(key(6), []byte("{}"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tamperFixture(t, nil)
			tamper(t, path, tt.edit)
			s, err := evidence.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Append(envelope(tt.session, "https://a.example.com/"), nil); !errors.Is(err, evidence.ErrCorrupt) {
				t.Errorf("Append error = %v, want ErrCorrupt", err)
			}
		})
	}
}
