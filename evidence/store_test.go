package evidence_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

func TestAppendRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})

	// Interleave two sessions: each must be its own chain.
	order := []string{"s-a", "s-b", "s-a", "s-a", "s-b"}
	appended := map[string][]*evidence.Envelope{}
	for i, id := range order {
		e := envelope(id, fmt.Sprintf("https://a.example.com/%d", i))
		if err := s.Append(e, nil); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		appended[id] = append(appended[id], e)
	}

	for id, want := range appended {
		got, err := s.Records(id)
		if err != nil {
			t.Fatalf("Records(%s): %v", id, err)
		}
		if len(got) != len(want) {
			t.Fatalf("Records(%s) = %d records, want %d", id, len(got), len(want))
		}
		prev := ""
		for i, g := range got {
			w := want[i]
			if g.Seq != uint64(i+1) || w.Seq != g.Seq {
				t.Errorf("%s record %d: seq %d (appended %d), want %d", id, i, g.Seq, w.Seq, i+1)
			}
			if g.PrevHash != prev {
				t.Errorf("%s record %d: prev_hash %q, want %q", id, g.Seq, g.PrevHash, prev)
			}
			if g.Version != evidence.FormatVersion || g.Time.Location() != time.UTC {
				t.Errorf("%s record %d: version %d, time %v", id, g.Seq, g.Version, g.Time)
			}
			h, err := evidence.Hash(g)
			if err != nil || h != g.Hash || g.Hash != w.Hash {
				t.Errorf("%s record %d: hash %s, recomputed %s (%v), appended %s", id, g.Seq, g.Hash, h, err, w.Hash)
			}
			gc, _ := evidence.CanonicalJSON(g)
			wc, _ := evidence.CanonicalJSON(w)
			if !bytes.Equal(gc, wc) {
				t.Errorf("%s record %d round trip:\n got %s\nwant %s", id, g.Seq, gc, wc)
			}
			prev = g.Hash
		}
	}

	sums, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 || sums[0].ID != "s-a" || sums[1].ID != "s-b" {
		t.Fatalf("Sessions = %+v, want s-a then s-b (by first time)", sums)
	}
	a := sums[0]
	if a.Records != 3 || !a.First.Equal(t0) || !a.Last.Equal(t0.Add(3*time.Second)) || a.Head != appended["s-a"][2].Hash {
		t.Errorf("summary s-a = %+v", a)
	}
	if _, err := s.Records("nope"); !errors.Is(err, evidence.ErrUnknownSession) {
		t.Errorf("Records(unknown) error = %v, want ErrUnknownSession", err)
	}
}

func TestDurableAcrossReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "evidence.db")
	s, err := evidence.Open(path, &evidence.Options{Now: fixedClock(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := s.Append(envelope("s1", fmt.Sprintf("https://a.example.com/%d", i)), []byte{0x89, 'P', 'N', 'G', byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for i, ro := range []bool{false, true} {
		s, err := evidence.Open(path, &evidence.Options{ReadOnly: ro})
		if err != nil {
			t.Fatalf("reopen (read-only %v): %v", ro, err)
		}
		rep, err := s.Verify()
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Sessions != 1 || rep.Records != 4+i { // the first pass appends one

			t.Errorf("read-only %v: report %+v", ro, rep)
		}
		if ro {
			if err := s.Append(envelope("s1", "https://a.example.com/"), nil); !errors.Is(err, evidence.ErrReadOnly) {
				t.Errorf("Append on read-only store: %v, want ErrReadOnly", err)
			}
		} else if err := s.Append(envelope("s1", "https://a.example.com/again"), nil); err != nil {
			t.Errorf("Append after reopen: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(tx *bolt.Tx) error
		opts    *evidence.Options
		want    error
	}{
		{
			name: "newer format version",
			prepare: func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte("format_version"), []byte("2"))
			},
			want: evidence.ErrNewerFormat,
		},
		{
			name: "newer format version read-only",
			prepare: func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte("format_version"), []byte("2"))
			},
			opts: &evidence.Options{ReadOnly: true},
			want: evidence.ErrNewerFormat,
		},
		{
			name: "someone else's bbolt file",
			prepare: func(tx *bolt.Tx) error {
				if err := tx.DeleteBucket([]byte("meta")); err != nil {
					return err
				}
				_, err := tx.CreateBucket([]byte("users"))
				return err
			},
			want: evidence.ErrNotEvidence,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, path := openStore(t, nil)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tamper(t, path, tt.prepare)
			s2, err := evidence.Open(path, tt.opts)
			if !errors.Is(err, tt.want) {
				if s2 != nil {
					_ = s2.Close()
				}
				t.Fatalf("Open error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestOpenReadOnlyMissingFile(t *testing.T) {
	t.Parallel()
	_, err := evidence.Open(filepath.Join(t.TempDir(), "absent.db"), &evidence.Options{ReadOnly: true})
	if err == nil {
		t.Fatal("read-only Open of a missing file succeeded")
	}
}

func TestAppendRejectsInvalid(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	tests := []struct {
		name string
		e    *evidence.Envelope
		want error
	}{
		{"nil envelope", nil, evidence.ErrInvalidEnvelope},
		{"empty session", envelope("", "https://a.example.com/"), evidence.ErrInvalidEnvelope},
		{"session too long", envelope(strings.Repeat("x", evidence.MaxSessionIDLen+1), "https://a/"), evidence.ErrInvalidEnvelope},
		{"session not UTF-8", envelope("s\xff", "https://a/"), evidence.ErrInvalidEnvelope},
		{"NaN argument", func() *evidence.Envelope {
			e := envelope("s", "https://a/")
			e.Args["n"] = nan()
			return e
		}(), evidence.ErrNotCanonical},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var before evidence.Envelope
			if tt.e != nil {
				before = *tt.e
			}
			if err := s.Append(tt.e, nil); !errors.Is(err, tt.want) {
				t.Fatalf("Append error = %v, want %v", err, tt.want)
			}
			if tt.e != nil && (tt.e.Seq != before.Seq || tt.e.Hash != before.Hash || tt.e.OutputSHA256 != before.OutputSHA256) {
				t.Errorf("failed Append modified the envelope: %+v", tt.e)
			}
		})
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestOutputTruncationKeepsFullHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		output    string
		limit     int
		truncated bool
	}{
		{"short output kept whole", "hello", 16, false},
		{"exactly the limit", strings.Repeat("a", 16), 16, false},
		{"long ASCII output", strings.Repeat("abcdefgh", 100), 16, true},
		{"cut inside a multibyte rune", "aaaaaaaaaaaaaaa€€€€€€", 16, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t, &evidence.Options{OutputLimit: tt.limit})
			e := envelope("s", "https://a.example.com/")
			e.Output = tt.output
			if err := s.Append(e, nil); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(tt.output))
			if e.OutputSHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("output_sha256 %s is not the hash of the full output", e.OutputSHA256)
			}
			if e.OutputTruncated != tt.truncated {
				t.Errorf("output_truncated = %v, want %v", e.OutputTruncated, tt.truncated)
			}
			if !utf8.ValidString(e.Output) {
				t.Errorf("kept output is not valid UTF-8: %q", e.Output)
			}
			if !tt.truncated {
				if e.Output != tt.output {
					t.Errorf("output changed: %q", e.Output)
				}
				return
			}
			kept, _, _ := strings.Cut(e.Output, "\n[output truncated")
			if len(kept) > tt.limit || !strings.HasPrefix(tt.output, kept) || !strings.Contains(e.Output, "output truncated") {
				t.Errorf("truncated output %q: want a prefix of at most %d bytes and a marker", e.Output, tt.limit)
			}
			recs, err := s.Records("s")
			if err != nil || recs[0].Output != e.Output || recs[0].OutputSHA256 != e.OutputSHA256 {
				t.Errorf("stored record differs: %+v, %v", recs, err)
			}
		})
	}
}

func TestScreenshotStoredByHash(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	png := []byte("\x89PNG\r\n\x1a\nfake image")
	e := envelope("s", "https://a.example.com/")
	e.ScreenshotSHA256 = "caller value is replaced"
	if err := s.Append(e, png); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(png)
	if e.ScreenshotSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("screenshot_sha256 = %s", e.ScreenshotSHA256)
	}
	got, err := s.Screenshot(e.ScreenshotSHA256)
	if err != nil || !bytes.Equal(got, png) {
		t.Fatalf("Screenshot = %q, %v", got, err)
	}
	// The same image again is stored once and still verifies.
	if err := s.Append(envelope("s", "https://a.example.com/2"), png); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "zz", strings.Repeat("0", 64)} {
		if _, err := s.Screenshot(bad); !errors.Is(err, evidence.ErrNoScreenshot) {
			t.Errorf("Screenshot(%q) error = %v, want ErrNoScreenshot", bad, err)
		}
	}
	if rep, err := s.Verify(); err != nil || !rep.OK() {
		t.Errorf("Verify: %+v, %v", rep, err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	const workers, each = 6, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := envelope(fmt.Sprintf("s%d", w%2), fmt.Sprintf("https://a.example.com/%d/%d", w, i))
				e.Time = t0.Add(time.Duration(w*each+i) * time.Millisecond)
				if err := s.Append(e, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := s.Verify()
	if err != nil || !rep.OK() || rep.Records != workers*each || rep.Sessions != 2 {
		t.Fatalf("Verify after concurrent appends: %+v, %v", rep, err)
	}
}

func TestExportWritesStoredRecords(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, &evidence.Options{Now: fixedClock(time.Second)})
	var want []string
	for i, id := range []string{"a", "b", "a"} {
		e := envelope(id, fmt.Sprintf("https://a.example.com/%d", i))
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
		if id == "a" {
			want = append(want, string(storedForm(t, e)))
		}
	}
	var buf bytes.Buffer
	if err := s.Export(&buf, "a"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Export(a):\n got %q\nwant %q", got, want)
	}
	buf.Reset()
	if err := s.Export(&buf, ""); err != nil || strings.Count(buf.String(), "\n") != 3 {
		t.Errorf("Export(all) = %q, %v", buf.String(), err)
	}
	if err := s.Export(&buf, "zz"); !errors.Is(err, evidence.ErrUnknownSession) {
		t.Errorf("Export(unknown) error = %v", err)
	}
}

func TestBackupIsAVerifiableCopy(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	for i := range 3 {
		if err := s.Append(envelope("s", fmt.Sprintf("https://a.example.com/%d", i)), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := s.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rep, err := c.Verify(); err != nil || !rep.OK() || rep.Records != 3 {
		t.Errorf("Verify(copy) = %+v, %v", rep, err)
	}
}

func TestOpenReportsALockedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.db")
	writer, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	_, err = evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if !errors.Is(err, evidence.ErrLocked) {
		t.Fatalf("second open of a held file: %v, want ErrLocked", err)
	}
}
