package anchor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/evidence/anchor"
	f_log "github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

// closedLog appends 600 leaves to a new log, closes it and returns its
// directory, its verifier and its checkpoint.
func closedLog(t *testing.T) (string, *anchor.Verifier, []byte) {
	t.Helper()
	l := openLog(t)
	cp := l.appendAll(t, records("s1", 1, 600))
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l.dir, l.verifier, cp
}

// rewrite changes one byte of a file of dir at offset.
func rewrite(t *testing.T, dir, rel string, offset int) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[offset] ^= 0x01
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// requireAuditFails audits the log in dir and fails t unless the audit
// fails with want and names where.
func requireAuditFails(t *testing.T, v *anchor.Verifier, dir string, want error, where string) {
	t.Helper()
	_, err := v.Audit(context.Background(), anchor.DirSource(dir), anchor.AuditOptions{})
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
	t.Log(err)
	if !strings.Contains(err.Error(), where) {
		t.Errorf("the error does not name %s: %v", where, err)
	}
}

// TestAuditDetectsRewrittenEntryBundle rewrites, removes or extends an
// entry bundle of a closed log: the tree recomputed from the bundles no
// longer gives the signed root, and the error names the bundle.
func TestAuditDetectsRewrittenEntryBundle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		names  string
	}{
		// Byte 30 of a full bundle: inside the first record's hash.
		{"a record's leaf in a full bundle", func(t *testing.T, dir string) { rewrite(t, dir, "tile/entries/001", 30) }, "tile/entries/001"},
		{"a record's leaf in the partial bundle", func(t *testing.T, dir string) { rewrite(t, dir, "tile/entries/002.p/88", 30) }, "tile/entries/002.p/88"},
		{"a bundle removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "tile/entries/000")); err != nil {
				t.Fatal(err)
			}
		}, "tile/entries/000"},
		{"a leaf cut from the partial bundle", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "tile/entries/002.p/88")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b[:len(b)-10], 0o644); err != nil {
				t.Fatal(err)
			}
		}, "tile/entries/002.p/88"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, v, _ := closedLog(t)
			tc.tamper(t, dir)
			requireAuditFails(t, v, dir, anchor.ErrBundleMismatch, tc.names)
		})
	}
}

// TestAuditDetectsRewrittenTile rewrites a hash tile of a closed log,
// at level 0 (leaf hashes) and level 1: the bundles still give the
// signed root, and the audit names the tile that differs from them.
func TestAuditDetectsRewrittenTile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tile string
		offset     int
	}{
		{"a leaf hash in a full tile", "tile/0/001", 32*7 + 3},
		{"a leaf hash in the partial tile", "tile/0/002.p/88", 32*87 + 31},
		{"a node hash at level 1", "tile/1/000.p/2", 32 + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, v, _ := closedLog(t)
			rewrite(t, dir, tc.tile, tc.offset)
			requireAuditFails(t, v, dir, anchor.ErrTileMismatch, tc.tile)
		})
	}
}

// TestAuditDetectsForgedCheckpoint replaces a log's checkpoint with one
// for the same origin signed by another key, and with a checkpoint whose
// body was changed after signing: neither verifies.
func TestAuditDetectsForgedCheckpoint(t *testing.T) {
	t.Parallel()
	dir, v, raw := closedLog(t)
	cp, err := v.Checkpoint(raw)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newKey(t, testOrigin)
	body := f_log.Checkpoint{Origin: testOrigin, Size: cp.Size, Hash: cp.Root}.Marshal()
	forged, err := note.Sign(&note.Note{Text: string(body)}, other)
	if err != nil {
		t.Fatal(err)
	}
	edited := []byte(strings.Replace(string(raw), "\n600\n", "\n599\n", 1))
	for name, cpRaw := range map[string][]byte{"signed by another key": forged, "body edited after signing": edited} {
		if err := os.WriteFile(filepath.Join(dir, "checkpoint"), cpRaw, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := v.Audit(context.Background(), anchor.DirSource(dir), anchor.AuditOptions{})
		if !errors.Is(err, anchor.ErrCheckpointSignature) {
			t.Errorf("%s: got %v, want ErrCheckpointSignature", name, err)
		}
	}
}

// TestAuditDetectsRollback compares the log with a checkpoint the auditor
// kept: a copy of the log as it was before (shorter, its own checkpoint
// genuine) is ErrRolledBack, and a log of the same key rewritten from
// another history (larger, genuinely signed) is ErrInconsistent.
func TestAuditDetectsRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := openLog(t)
	l.appendAll(t, records("s1", 1, 300))
	earlier := copyDir(t, l.dir)
	kept := l.appendAll(t, records("s2", 1, 300))

	if _, err := l.verifier.Audit(ctx, anchor.DirSource(earlier), anchor.AuditOptions{}); err != nil {
		t.Fatalf("the earlier copy alone verifies (it was genuine then): %v", err)
	}
	_, err := l.verifier.Audit(ctx, anchor.DirSource(earlier), anchor.AuditOptions{Kept: [][]byte{kept}})
	if !errors.Is(err, anchor.ErrRolledBack) {
		t.Fatalf("rolled back to size 300 after keeping 600: got %v, want ErrRolledBack", err)
	}

	// The same key, another history: session s2's records removed and
	// others appended, past the kept size (700) or up to it (600, another
	// root).
	for _, n := range []int{400, 300} {
		rewritten := openLogWith(t, t.TempDir(), l.signer, l.vkey)
		rewritten.appendAll(t, records("s1", 1, 300))
		rewritten.appendAll(t, records("s3", 1, n))
		_, err = l.verifier.Audit(ctx, anchor.DirSource(rewritten.dir), anchor.AuditOptions{Kept: [][]byte{kept}})
		if !errors.Is(err, anchor.ErrInconsistent) {
			t.Fatalf("rewritten to size %d after keeping 600: got %v, want ErrInconsistent", 300+n, err)
		}
	}
}
