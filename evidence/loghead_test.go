package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// TestLogHeadAsDocumented checks the stored log-wide head against
// docs/evidence-format.md, recomputed without the package: its set is the
// sum of the sessions' head leaves, its counts are theirs, it names the
// last append, its signature is over the documented message, each head's
// prev is the digest of the one before, and every record's log_n is the
// number of the head its append made.
func TestLogHeadAsDocumented(t *testing.T) {
	t.Parallel()
	signer := testKey(1)
	pub := signer.Public().(ed25519.PublicKey)
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second), SigningKey: signer})
	var msgs [][]byte // the message of each log-wide head, by n-1
	for i, session := range []string{"s1", "s2", "s1", "line\nbreak", "s2"} {
		e := envelope(session, fmt.Sprintf("https://a.example.com/%d", i))
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
		if e.LogN != uint64(i+1) {
			t.Errorf("append %d: LogN %d, want %d", i+1, e.LogN, i+1)
		}
		s.Close()
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		_ = db.View(func(tx *bolt.Tx) error {
			h := readLog(t, tx)
			set, sessions, pruned, records := setOf(t, tx)
			state := tx.Bucket([]byte("meta")).Get([]byte("log_set"))
			if !bytes.Equal(state, set.Bytes()) || h.Set != sha256hex(state) {
				t.Errorf("head #%d: the stored set state is not the documented sum, or set is not its SHA-256", h.N)
			}
			if h.N != uint64(i+1) || h.Sessions != sessions || h.Pruned != pruned || h.Records != records || h.Legacy != 0 {
				t.Errorf("head %+v, want n %d, %d sessions, %d pruned, %d records", h, i+1, sessions, pruned, records)
			}
			if h.Last == nil || h.Last.Session != session || h.Last.Seq != e.Seq || h.Last.Hash != e.Hash {
				t.Errorf("head #%d: last %+v, want %s #%d %s", h.N, h.Last, session, e.Seq, e.Hash)
			}
			wantPrev := ""
			if i > 0 {
				wantPrev = sha256hex(msgs[i-1])
			}
			if h.Prev != wantPrev {
				t.Errorf("head #%d: prev %q, want the digest of the previous head's message %q", h.N, h.Prev, wantPrev)
			}
			sig, _ := hex.DecodeString(h.Sig)
			if h.Key != evidence.KeyID(pub) || !ed25519.Verify(pub, h.Message(), sig) {
				t.Errorf("head #%d: signature by %s does not verify over the documented message %q", h.N, h.Key, h.Message())
			}
			msgs = append(msgs, h.Message())
			var rec struct {
				LogN uint64 `json:"log_n"`
			}
			_ = json.Unmarshal(chain(tx, session).Get(key(e.Seq)), &rec)
			if rec.LogN != h.N {
				t.Errorf("record %s #%d: log_n %d, want %d", session, e.Seq, rec.LogN, h.N)
			}
			return nil
		})
		db.Close()
		if s, err = evidence.Open(path, &evidence.Options{Now: fixedClock(time.Second), SigningKey: signer}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	rep, err := s.VerifyWithKey(pub)
	if err != nil || !rep.OK() || rep.LogHead == nil || rep.LogHead.N != 5 || rep.LogHead.Sessions != 3 || !rep.LogHead.Signed {
		t.Fatalf("VerifyWithKey: %+v %v, %v", rep, rep.LogHead, err)
	}
	if c := rep.Completeness(); !strings.Contains(c, "log-wide head #5 covers every session: 3 in the log, 0 pruned; its signature verified") {
		t.Errorf("Completeness() = %q", c)
	}
}

// TestVerifyDetectsMissingSessions removes whole sessions, heads and the
// log-wide head as someone with write access to the file would, and
// checks what Verify (without the key) and VerifyWithKey report. The
// fixture's last append is record 5 of s1; s2 has 2 records.
func TestVerifyDetectsMissingSessions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// edit changes the fixture; earlier is the log as it was after
		// its first record of s2, as a copy taken then holds it.
		edit func(t *testing.T, tx *bolt.Tx, earlier *earlierLog) error
		// want: Verify without the key; withKey: VerifyWithKey, besides
		// want (nil: the same).
		want, withKey []wantProblem
	}{
		{
			name: "a session's records and head deleted",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error { return deleteSession(tx, "s2") },
			want: []wantProblem{{"", 0, "log-wide head #7: 1 session(s) missing: it covers 2 session(s), the log has 1 (removed with their heads)"}},
		},
		{
			name: "the last written session deleted, its screenshot too",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				shot := recordsOf(tx, "s1")[3].ScreenshotSHA256
				if err := tx.Bucket([]byte("screenshots")).Delete([]byte(shot)); err != nil {
					return err
				}
				return deleteSession(tx, "s1")
			},
			want: []wantProblem{
				{"s1", 5, "missing: log-wide head #7 was made by appending this record, and the log has no head for its session"},
				{"", 0, "1 session(s) missing"},
			},
		},
		{
			name: "a session deleted and the log-wide head recomputed without the key",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				if err := deleteSession(tx, "s2"); err != nil {
					return err
				}
				relog(t, tx)
				return nil
			},
			withKey: []wantProblem{{"", 0, "log-wide head #7: its signature does not verify"}},
		},
		{
			name: "only a session's head deleted",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				return tx.Bucket([]byte("heads")).Delete([]byte("s2"))
			},
			want: []wantProblem{{"s2", 2, "records without head"}, {"", 0, "1 session(s) missing"}},
		},
		{
			name: "the log-wide head deleted",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				meta := tx.Bucket([]byte("meta"))
				if err := meta.Delete([]byte("log_set")); err != nil {
					return err
				}
				return meta.Delete([]byte("log_head"))
			},
			want: []wantProblem{{"s1", 5, "made under log-wide head #7, but the log has no log-wide head: it was removed"}},
		},
		{
			name: "the log-wide head and every session deleted, a pruned session's tombstone left",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				meta := tx.Bucket([]byte("meta"))
				if err := meta.Delete([]byte("log_head")); err != nil {
					return err
				}
				if err := tx.Bucket([]byte("pruned")).Put([]byte(strings.Repeat("ab", 32)), []byte(`{"n":3}`)); err != nil {
					return err
				}
				if err := deleteSession(tx, "s1"); err != nil {
					return err
				}
				return deleteSession(tx, "s2")
			},
			want: []wantProblem{{"", 0, "1 pruned session(s) are recorded, but the log has no log-wide head: it was removed"}},
		},
		{
			name: "the log-wide head's counts altered",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				h := readLog(t, tx)
				h.Sessions++
				putLog(t, tx, h, tx.Bucket([]byte("meta")).Get([]byte("log_set")))
				return nil
			},
			want:    []wantProblem{{"", 0, "log-wide head #7: altered: it counts 3 session(s)"}},
			withKey: []wantProblem{{"", 0, "log-wide head #7: its signature does not verify"}},
		},
		{
			name: "the set state beside the log-wide head altered",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				state := bytes.Clone(tx.Bucket([]byte("meta")).Get([]byte("log_set")))
				state[7]++
				return tx.Bucket([]byte("meta")).Put([]byte("log_set"), state)
			},
			want: []wantProblem{{"", 0, "log-wide head #7: the set state stored beside it (meta/log_set) does not hash to its set"}},
		},
		{
			name: "the log-wide head put back to an earlier one",
			edit: func(t *testing.T, tx *bolt.Tx, earlier *earlierLog) error {
				meta := tx.Bucket([]byte("meta"))
				if err := meta.Put([]byte("log_set"), earlier.state); err != nil {
					return err
				}
				return meta.Put([]byte("log_head"), earlier.head)
			},
			want: []wantProblem{
				{"s1", 5, "made under log-wide head #7, beyond the log's log-wide head #2"},
				{"s2", 0, "head (seq 2 hash"},
				{"", 0, "log-wide head #2: the sessions' heads name 7 record(s), it covers 2"},
			},
		},
		{
			name: "a session rolled back to an earlier signed head, the records after it removed",
			edit: func(t *testing.T, tx *bolt.Tx, earlier *earlierLog) error {
				if err := chain(tx, "s2").Delete(key(2)); err != nil {
					return err
				}
				return tx.Bucket([]byte("heads")).Put([]byte("s2"), earlier.s2Head)
			},
			want: []wantProblem{{"", 0, "log-wide head #7: the sessions' heads name 6 record(s), it covers 7"}},
		},
		{
			name: "two sessions' heads swapped",
			edit: func(t *testing.T, tx *bolt.Tx, _ *earlierLog) error {
				heads := tx.Bucket([]byte("heads"))
				h1, h2 := bytes.Clone(heads.Get([]byte("s1"))), bytes.Clone(heads.Get([]byte("s2")))
				if err := heads.Put([]byte("s1"), h2); err != nil {
					return err
				}
				return heads.Put([]byte("s2"), h1)
			},
			want: []wantProblem{
				{"s1", 0, "is not the one log-wide head #7 was made with"},
				{"", 0, "log-wide head #7: the sessions' heads are not the ones it covers"},
			},
		},
	}
	for _, tt := range tests {
		unsignedAndSigned(t, tt.name, func(t *testing.T, k ed25519.PrivateKey) {
			signed := k != nil
			path, earlier := tamperFixtureWithEarlier(t, k)
			tamper(t, path, func(tx *bolt.Tx) error { return tt.edit(t, tx, earlier) })
			rep := verifyFile(t, path, k)
			want := tt.want
			if signed {
				want = append(append([]wantProblem{}, want...), tt.withKey...)
			}
			if len(want) == 0 {
				if !rep.OK() {
					t.Fatalf("the edit is not self-consistent (%q): the test proves nothing", rep.Problems)
				}
				return
			}
			if rep.OK() {
				t.Fatal("no problem reported")
			}
			for _, w := range want {
				if !hasProblem(rep, w) {
					t.Errorf("no problem session %q record %d: …%s…; got %q", w.session, w.seq, w.reason, rep.Problems)
				}
			}
		})
	}
}

// earlierLog is what the fixture held after its second append (s1 #1,
// s2 #1): the log-wide head #2 and its set state, and s2's head then,
// signed when the fixture is.
type earlierLog struct {
	head, state, s2Head []byte
}

// tamperFixtureWithEarlier is tamperFixture, keeping copies of the
// log-wide head #2 and of s2's head after its first record, as someone
// who copied the file then would have.
func tamperFixtureWithEarlier(t *testing.T, key ed25519.PrivateKey) (string, *earlierLog) {
	t.Helper()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second), SigningKey: key})
	var earlier earlierLog
	appendTo := func(session string, i int, shot []byte) {
		if err := s.Append(envelope(session, fmt.Sprintf("https://%s.example.com/%d", session, i)), shot); err != nil {
			t.Fatal(err)
		}
	}
	// The order of tamperFixture: s1 #1, s2 #1, s1 #2, s2 #2, s1 #3..#5.
	appendTo("s1", 1, nil)
	appendTo("s2", 1, nil)
	s.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		earlier = earlierLog{head: bytes.Clone(meta.Get([]byte("log_head"))), state: bytes.Clone(meta.Get([]byte("log_set"))),
			s2Head: bytes.Clone(tx.Bucket([]byte("heads")).Get([]byte("s2")))}
		return nil
	})
	db.Close()
	if s, err = evidence.Open(path, &evidence.Options{Now: fixedClock(time.Second), SigningKey: key}); err != nil {
		t.Fatal(err)
	}
	appendTo("s1", 2, nil)
	appendTo("s2", 2, nil)
	appendTo("s1", 3, []byte("\x89PNG screenshot of record 3"))
	appendTo("s1", 4, nil)
	appendTo("s1", 5, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, &earlier
}

// TestPruneKeepsTheLogVerifiable: a prune moves each removed session from
// the log-wide head's live set to its pruned set, signed, so what remains
// verifies with the key; a tombstone removed afterwards, or a session
// removed and recorded as pruned by someone without the key, shows.
func TestPruneKeepsTheLogVerifiable(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	pub := key.Public().(ed25519.PublicKey)
	s, path, _ := pruneFixture(t, key)
	rep, err := s.Prune(pruneCutoff)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 2 {
		t.Fatalf("pruned %d sessions, want 2", len(rep.Sessions))
	}
	v, err := s.VerifyWithKey(pub)
	if err != nil || !v.OK() || v.LogHead == nil || v.LogHead.Sessions != 3 || v.LogHead.Pruned != 2 || v.LogHead.N != 9 {
		t.Fatalf("VerifyWithKey after prune: %+v %+v, %v", v, v.LogHead, err)
	}
	if c := v.Completeness(); !strings.Contains(c, "3 in the log, 2 pruned") {
		t.Errorf("Completeness() = %q", c)
	}
	// Appending after a prune extends the log-wide head as before.
	if err := s.Append(envelope("new", "https://a.example.com/after"), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	edits := []struct {
		name string
		edit func(t *testing.T, tx *bolt.Tx) error
		want []wantProblem
	}{
		{
			name: "a tombstone removed",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				k, _ := tx.Bucket([]byte("pruned")).Cursor().First()
				return tx.Bucket([]byte("pruned")).Delete(k)
			},
			want: []wantProblem{{"", 0, "log-wide head #10: 1 pruned session(s) missing: it covers 2, the log records 1"}},
		},
		{
			name: "a session removed and recorded as pruned without the key",
			edit: func(t *testing.T, tx *bolt.Tx) error {
				var h storedHead
				if err := json.Unmarshal(tx.Bucket([]byte("heads")).Get([]byte("edge")), &h); err != nil {
					return err
				}
				if err := tx.Bucket([]byte("pruned")).Put([]byte(sha256hex(evidence.HeadMessage("edge", h.Seq, h.Hash))), []byte(`{"n":9}`)); err != nil {
					return err
				}
				if err := deleteSession(tx, "edge"); err != nil {
					return err
				}
				relog(t, tx)
				return nil
			},
			want: []wantProblem{{"", 0, "log-wide head #10: its signature does not verify"}},
		},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			p := copyFile(t, path)
			tamper(t, p, func(tx *bolt.Tx) error { return tt.edit(t, tx) })
			rep := verifyFile(t, p, key)
			for _, w := range tt.want {
				if !hasProblem(rep, w) {
					t.Errorf("no problem …%s…; got %q", w.reason, rep.Problems)
				}
			}
		})
	}
}

// TestAppendToASignedLogNeedsTheKey: a store without the signing key does
// not extend a signed log (its heads would be unsigned and the log would
// fail VerifyWithKey from then on), whether the log has a signed log-wide
// head or is one of signed session heads written before log-wide heads:
// Signed says so at Open, Append refuses, nothing is written, and the log
// still verifies with the key. An unsigned log is extended as before.
func TestAppendToASignedLogNeedsTheKey(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	s, withLogHead, _ := pruneFixture(t, key)
	s.Close()
	for _, c := range []struct {
		name, path string
		sessions   int
	}{
		{"signed log-wide head", withLogHead, 5},
		{"signed session heads, no log-wide head", oldFormatLog(t, key), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			unkeyed, err := evidence.Open(c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !unkeyed.Signed() {
				t.Error("Signed() is false on a signed log")
			}
			err = unkeyed.Append(envelope("later", "https://a.example.com/later"), nil)
			if !errors.Is(err, evidence.ErrNeedKey) {
				t.Fatalf("Append to a signed log without the key: %v, want ErrNeedKey", err)
			}
			if sums, _ := unkeyed.Sessions(); len(sums) != c.sessions {
				t.Errorf("a refused append changed the sessions: %d, want %d", len(sums), c.sessions)
			}
			unkeyed.Close()
			if rep := verifyFile(t, c.path, key); !rep.OK() {
				t.Errorf("the log no longer verifies with its key after a refused append: %q", rep.Problems)
			}
		})
	}
	plain, _, _ := pruneFixture(t, nil)
	if plain.Signed() {
		t.Error("Signed() is true on an unsigned log")
	}
	if err := plain.Append(envelope("later", "https://a.example.com/later"), nil); err != nil {
		t.Errorf("Append to an unsigned log without a key: %v", err)
	}
}

// TestPruneOfASignedLogNeedsTheKey: without the signing key a signed log
// is not pruned (the log-wide head that records the prune could not be
// signed), and nothing is removed; an unsigned log is.
func TestPruneOfASignedLogNeedsTheKey(t *testing.T) {
	t.Parallel()
	s, path, _ := pruneFixture(t, testKey(1))
	s.Close()
	unkeyed, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unkeyed.Close()
	if _, err := unkeyed.Prune(pruneCutoff); !errors.Is(err, evidence.ErrNeedKey) {
		t.Fatalf("Prune of a signed log without the key: %v, want ErrNeedKey", err)
	}
	if sums, _ := unkeyed.Sessions(); len(sums) != 5 {
		t.Errorf("a refused prune removed sessions: %d left", len(sums))
	}
	plain, _, _ := pruneFixture(t, nil)
	if _, err := plain.Prune(pruneCutoff); err != nil {
		t.Errorf("Prune of an unsigned log: %v", err)
	}
	if v, err := plain.Verify(); err != nil || !v.OK() || v.LogHead.Pruned != 2 || v.LogHead.Signed {
		t.Errorf("Verify after an unsigned prune: %+v, %v", v, err)
	}
}

// oldFormatLog writes, with bbolt alone, a log as browsergate wrote it
// before log-wide heads (spec revision 7): sessions "a" (2 records) and
// "b" (1), heads signed with key when set, no log-wide head, no log_n.
func oldFormatLog(t *testing.T, signer ed25519.PrivateKey) string {
	t.Helper()
	path := t.TempDir() + "/old.db"
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket([]byte("meta"))
		if err := meta.Put([]byte("format_version"), []byte("1")); err != nil {
			return err
		}
		sessions, _ := tx.CreateBucket([]byte("sessions"))
		for _, b := range []string{"heads", "screenshots", "configs"} {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		for _, r := range []struct {
			session string
			n       uint64
		}{{"a", 2}, {"b", 1}} {
			chain, _ := sessions.CreateBucket([]byte(r.session))
			prev := ""
			for seq := uint64(1); seq <= r.n; seq++ {
				e := envelope(r.session, "https://old.example.com/")
				e.Version, e.Seq, e.PrevHash, e.Time = 1, seq, prev, t0.Add(time.Duration(seq)*time.Second)
				e.OutputSHA256 = sha256hex([]byte(e.Output))
				if e.Hash, err = evidence.Hash(e); err != nil {
					return err
				}
				if err := chain.Put(key(seq), storedForm(t, e)); err != nil {
					return err
				}
				prev = e.Hash
			}
			h := storedHead{Hash: prev, Seq: r.n}
			if signer != nil {
				h.Key = evidence.KeyID(signer.Public().(ed25519.PublicKey))
				h.Sig = hex.EncodeToString(ed25519.Sign(signer, evidence.HeadMessage(r.session, h.Seq, h.Hash)))
			}
			if err := putHead(tx, r.session, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOldFormatLog: a log written before log-wide heads verifies, and the
// report says it cannot show whether whole sessions were removed; the
// first append by this version starts a log-wide head that covers its
// sessions as found and says so; a signed one is pruned only with the key.
func TestOldFormatLog(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	pub := key.Public().(ed25519.PublicKey)
	path := oldFormatLog(t, key)
	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ro.VerifyWithKey(pub)
	ro.Close()
	if err != nil || !rep.OK() || rep.Sessions != 2 || rep.LogHead != nil {
		t.Fatalf("VerifyWithKey on an old log: %+v, %v", rep, err)
	}
	if c := rep.Completeness(); !strings.Contains(c, "no log-wide head: the log was written before browsergate kept one") ||
		!strings.Contains(c, "cannot show whether whole sessions were removed") {
		t.Errorf("Completeness() of an old log = %q", c)
	}

	unkeyed, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unkeyed.Prune(t0.Add(time.Hour)); !errors.Is(err, evidence.ErrNeedKey) {
		t.Errorf("Prune of an old signed log without the key: %v, want ErrNeedKey", err)
	}
	unkeyed.Close()

	later := func() time.Time { return t0.Add(2 * time.Hour) }
	s, err := evidence.Open(path, &evidence.Options{SigningKey: key, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(envelope("c", "https://new.example.com/"), nil); err != nil {
		t.Fatal(err)
	}
	rep, err = s.VerifyWithKey(pub)
	if err != nil || !rep.OK() || rep.LogHead == nil || rep.LogHead.N != 1 || rep.LogHead.Legacy != 2 || rep.LogHead.Sessions != 3 {
		t.Fatalf("VerifyWithKey after the first append: %+v %+v, %v", rep, rep.LogHead, err)
	}
	if c := rep.Completeness(); !strings.Contains(c, "of which 2 written before log-wide heads, taken as found") {
		t.Errorf("Completeness() = %q", c)
	}
	if _, err := s.Prune(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if rep, err = s.VerifyWithKey(pub); err != nil || !rep.OK() || rep.LogHead.Pruned != 2 || rep.LogHead.Sessions != 1 {
		t.Errorf("VerifyWithKey after pruning the old sessions: %+v %+v, %v", rep, rep.LogHead, err)
	}
}

// TestWriterRefusesALogWideHeadItCannotVouchFor: a store that signs does
// not extend a log-wide head whose signature does not verify, that another
// key signed, or that nobody signed (someone who removed a session could
// have recomputed it), nor a log whose log-wide head was removed; it
// would sign over the removal.
func TestWriterRefusesALogWideHeadItCannotVouchFor(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	tests := []struct {
		name   string
		signer ed25519.PrivateKey // of the fixture
		edit   func(t *testing.T, tx *bolt.Tx) error
		want   string
	}{
		{"a session removed, the log-wide head recomputed", key, func(t *testing.T, tx *bolt.Tx) error {
			if err := deleteSession(tx, "s2"); err != nil {
				return err
			}
			relog(t, tx)
			return nil
		}, "the signature of log-wide head #7 does not verify"},
		{"signed by another key", testKey(2), nil, "is signed by key"},
		{"not signed", nil, nil, "log-wide head #7 is not signed"},
		{"the log-wide head removed", key, func(t *testing.T, tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Delete([]byte("log_head"))
		}, "has records made under log-wide head #7, but the log has none"},
		{"the set state altered", key, func(t *testing.T, tx *bolt.Tx) error {
			state := bytes.Clone(tx.Bucket([]byte("meta")).Get([]byte("log_set")))
			state[0]++
			return tx.Bucket([]byte("meta")).Put([]byte("log_set"), state)
		}, "does not hash to the log-wide head's set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tamperFixture(t, tt.signer)
			if tt.edit != nil {
				tamper(t, path, func(tx *bolt.Tx) error { return tt.edit(t, tx) })
			}
			s, err := evidence.Open(path, &evidence.Options{SigningKey: key})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, evidence.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open for writing: %v, want ErrCorrupt …%s…", err, tt.want)
			}
		})
	}
}

// TestVerifyEscapesWhatTheFileSays: a log-wide head's key is the file's
// text, which whoever wrote the file chose; verify's problems quote it
// with its terminal escapes made visible, never raw.
func TestVerifyEscapesWhatTheFileSays(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	s, path, _ := pruneFixture(t, key)
	s.Close()
	tamper(t, path, func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		var h map[string]any
		if err := json.Unmarshal(meta.Get([]byte("log_head")), &h); err != nil {
			return err
		}
		h["key"] = "\x1b]0;owned\x07\x1b[2Jabc"
		raw, err := json.Marshal(h)
		if err != nil {
			return err
		}
		return meta.Put([]byte("log_head"), raw)
	})
	rep := verifyFile(t, path, key)
	if rep.OK() {
		t.Fatal("a log-wide head signed by another key verifies")
	}
	quoted := false
	for _, p := range rep.Problems {
		line := p.String()
		if strings.ContainsAny(line, "\x1b\x07") {
			t.Errorf("a problem writes the file's control characters raw: %q", line)
		}
		quoted = quoted || strings.Contains(line, `\u001B]0;owned\u0007\u001B[2Jabc`)
	}
	if !quoted {
		t.Errorf("no problem quotes the key, escaped: %q", rep.Problems)
	}
}
