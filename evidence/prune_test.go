package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

// pruneCutoff is the --before of the prune tests.
var pruneCutoff = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type pruneBlobs struct {
	onlyOld, shared   []byte // screenshots
	oldConfig, unused string // config hashes
	keptConfig        string
	onlyOldShotHash   string
	sharedShotHash    string
}

// pruneFixture writes sessions whose last record is before the cutoff
// ("old-1", "old-2"), one that starts before it and ends after ("span"),
// one whose last record is exactly at the cutoff ("edge"), and one after
// it ("new"); with screenshots and config blobs used only by old sessions,
// shared with kept ones, and used by none.
func pruneFixture(t *testing.T, key ed25519.PrivateKey) (*evidence.Store, string, pruneBlobs) {
	t.Helper()
	s, path := openStore(t, &evidence.Options{SigningKey: key})
	var b pruneBlobs
	b.onlyOld, b.shared = []byte("\x89PNG only old-1"), []byte("\x89PNG shared by old-2 and new")
	b.onlyOldShotHash, b.sharedShotHash = sha256hex(b.onlyOld), sha256hex(b.shared)
	var err error
	if b.oldConfig, err = s.PutConfig([]byte("old config")); err != nil {
		t.Fatal(err)
	}
	if b.keptConfig, err = s.PutConfig([]byte("new config")); err != nil {
		t.Fatal(err)
	}
	if b.unused, err = s.PutConfig([]byte("config of a session that made no call")); err != nil {
		t.Fatal(err)
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }
	for _, r := range []struct {
		session string
		at      time.Time
		shot    []byte
		config  string
	}{
		{"old-1", day(2025, 1, 1), b.onlyOld, b.oldConfig},
		{"span", day(2025, 1, 2), nil, ""},
		{"old-1", day(2025, 1, 3), nil, b.oldConfig},
		{"old-2", day(2025, 1, 5), b.shared, ""},
		{"edge", day(2025, 6, 1), nil, ""},
		{"edge", pruneCutoff, nil, ""},
		{"span", day(2026, 2, 1), nil, ""},
		{"new", day(2026, 3, 1), b.shared, b.keptConfig},
	} {
		e := envelope(r.session, "https://a.example.com/")
		e.Time, e.ConfigSHA256 = r.at, r.config
		if err := s.Append(e, r.shot); err != nil {
			t.Fatal(err)
		}
	}
	return s, path, b
}

func TestPruneRemovesOldSessionsAndTheirBlobs(t *testing.T) {
	t.Parallel()
	for _, signed := range []bool{false, true} {
		name := "unsigned"
		var key ed25519.PrivateKey
		if signed {
			name, key = "signed", testKey(1)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _, b := pruneFixture(t, key)
			rep, err := s.Prune(pruneCutoff)
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, sum := range rep.Sessions {
				removed = append(removed, sum.ID)
			}
			if !slices.Equal(removed, []string{"old-1", "old-2"}) || rep.Records != 3 || rep.Kept != 3 {
				t.Errorf("removed %v (%d records), kept %d; want old-1, old-2 (3 records), kept 3", removed, rep.Records, rep.Kept)
			}
			if !slices.Equal(rep.Screenshots, []string{b.onlyOldShotHash}) {
				t.Errorf("screenshots removed %v, want only %s", rep.Screenshots, b.onlyOldShotHash)
			}
			wantConfigs := []string{b.oldConfig, b.unused}
			slices.Sort(wantConfigs)
			if !slices.Equal(rep.Configs, wantConfigs) {
				t.Errorf("configs removed %v, want %v", rep.Configs, wantConfigs)
			}

			sums, err := s.Sessions()
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, sum := range sums {
				kept = append(kept, sum.ID)
			}
			if !slices.Equal(kept, []string{"span", "edge", "new"}) {
				t.Errorf("sessions left %v, want span, edge, new", kept)
			}
			if _, err := s.Records("old-1"); !errors.Is(err, evidence.ErrUnknownSession) {
				t.Errorf("Records(old-1) after prune: %v", err)
			}
			if _, err := s.Screenshot(b.onlyOldShotHash); !errors.Is(err, evidence.ErrNoScreenshot) {
				t.Errorf("screenshot of old-1 only: %v, want removed", err)
			}
			if _, err := s.Screenshot(b.sharedShotHash); err != nil {
				t.Errorf("screenshot shared with new: %v, want kept", err)
			}
			if _, err := s.Config(b.keptConfig); err != nil {
				t.Errorf("config of new: %v, want kept", err)
			}

			// What remains verifies, and with the key when it was signed.
			if v, err := s.Verify(); err != nil || !v.OK() || v.Sessions != 3 || v.Records != 5 {
				t.Errorf("Verify after prune: %+v, %v", v, err)
			}
			if signed {
				if v, err := s.VerifyWithKey(key.Public().(ed25519.PublicKey)); err != nil || !v.OK() || v.Signed != 3 {
					t.Errorf("VerifyWithKey after prune: %+v, %v", v, err)
				}
			}
			// Appending to a kept session still works.
			if err := s.Append(envelope("span", "https://a.example.com/later"), nil); err != nil {
				t.Errorf("Append after prune: %v", err)
			}
		})
	}
}

func TestPruneNothingBefore(t *testing.T) {
	t.Parallel()
	s, _, _ := pruneFixture(t, nil)
	rep, err := s.Prune(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// Only the config blob no record ever named goes.
	if len(rep.Sessions) != 0 || rep.Records != 0 || len(rep.Screenshots) != 0 || len(rep.Configs) != 1 || rep.Kept != 5 {
		t.Errorf("Prune(2024) = %+v", rep)
	}
}

func TestPruneRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		prune func(s *evidence.Store) error
		edit  func(tx *bolt.Tx) error
		want  error
	}{
		{
			name:  "a log that does not verify",
			prune: func(s *evidence.Store) error { _, err := s.Prune(pruneCutoff); return err },
			edit: func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("sessions")).Bucket([]byte("old-1")).Delete(key(1))
			},
			want: evidence.ErrNotIntact,
		},
		{
			name: "heads not signed by the given key",
			prune: func(s *evidence.Store) error {
				_, err := s.PruneWithKey(pruneCutoff, testKey(2).Public().(ed25519.PublicKey))
				return err
			},
			want: evidence.ErrNotIntact,
		},
		{
			name: "a malformed key",
			prune: func(s *evidence.Store) error {
				_, err := s.PruneWithKey(pruneCutoff, ed25519.PublicKey("short"))
				return err
			},
			want: evidence.ErrBadKey,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, path, _ := pruneFixture(t, testKey(1))
			if tt.edit != nil {
				s.Close()
				tamper(t, path, tt.edit)
				var err error
				if s, err = evidence.Open(path, nil); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			}
			before, _ := s.Sessions()
			if err := tt.prune(s); !errors.Is(err, tt.want) {
				t.Fatalf("prune error = %v, want %v", err, tt.want)
			}
			after, _ := s.Sessions()
			if len(after) != len(before) {
				t.Errorf("a refused prune removed sessions: %d before, %d after", len(before), len(after))
			}
		})
	}
}

func TestPruneReadOnly(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, nil)
	s.Close()
	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Prune(pruneCutoff); !errors.Is(err, evidence.ErrReadOnly) {
		t.Errorf("Prune on a read-only store: %v, want ErrReadOnly", err)
	}
}

// TestCompactLeavesNoTraceOfPrunedSessions: after Prune, the removed
// sessions' ids, page text and blobs are still in the file's freed pages
// (bbolt reuses them, it does not wipe them); after Compact, a byte search
// of the file finds none of them, what remains verifies, and the file is
// no larger.
func TestCompactLeavesNoTraceOfPrunedSessions(t *testing.T) {
	t.Parallel()
	s, path, b := pruneFixture(t, nil)
	marker := "PRUNED-PAGE-TEXT-7f3a"
	e := envelope("old-1", "https://a.example.com/"+marker)
	e.Time, e.Output = time.Date(2025, 1, 4, 0, 0, 0, 0, time.UTC), "the page said "+marker
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(pruneCutoff); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Session ids as the records and heads hold them (the kept shared
	// screenshot's bytes name old-2 unquoted).
	gone := [][]byte{[]byte(marker), []byte(`"old-1"`), []byte(`"old-2"`), []byte("old-1"), b.onlyOld, []byte("old config")}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, g := range gone {
		if bytes.Contains(raw, g) {
			left++
		}
	}
	if left == 0 {
		t.Log("nothing of the pruned sessions was left in the freed pages this time: the check below proves less")
	}
	before, after, err := evidence.Compact(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gone {
		if bytes.Contains(raw, g) {
			t.Errorf("after Compact the file still holds %q", g)
		}
	}
	if !bytes.Contains(raw, []byte("span")) || after > before {
		t.Errorf("after Compact: kept sessions present %v, size %d -> %d", bytes.Contains(raw, []byte("span")), before, after)
	}
	s2, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, err := s2.Verify(); err != nil || !v.OK() || v.Sessions != 3 {
		t.Errorf("Verify after Compact: %+v, %v", v, err)
	}
}

// TestCompactKeepsTheFile: the compacted file keeps the old one's mode,
// and a path that is a symlink has the file it names compacted (the link
// stays a link); no copy is left beside it.
func TestCompactKeepsTheFile(t *testing.T) {
	t.Parallel()
	s, path, _ := pruneFixture(t, nil)
	if _, err := s.Prune(pruneCutoff); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := evidence.Compact(link, time.Second); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the compacted file's mode: %v %v, want 0640", fi.Mode(), err)
	}
	if raw, _ := os.ReadFile(path); bytes.Contains(raw, []byte(`"old-1"`)) {
		t.Error("the file the link names still holds the pruned session")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*compact-*")); len(left) > 0 {
		t.Errorf("copies left beside the file: %v", left)
	}
}
