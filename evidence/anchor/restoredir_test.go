package anchor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence/anchor"
)

// TestRestoreRefusesADirectoryHoldingOtherFiles: a log directory that
// holds anything besides Tessera's files (an evidence store put there) is
// neither removed nor moved by a restore: it is refused, naming the file.
func TestRestoreRefusesADirectoryHoldingOtherFiles(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	for _, leaves := range []int{0, 10} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "evidence.db")
		if err := os.WriteFile(db, []byte("unshipped records"), 0o600); err != nil {
			t.Fatal(err)
		}
		b := openLogWith(t, dir, a.signer, a.vkey)
		if leaves > 0 {
			b.appendAll(t, records("a", 1, leaves))
		}
		stats, err := b.Restore(context.Background(), a.Source(), a.verifier)
		if !errors.Is(err, anchor.ErrNotLogDir) || !strings.Contains(err.Error(), "evidence.db") || stats.Restored {
			t.Fatalf("restore into a directory of %d leaves holding evidence.db: %+v, %v; want ErrNotLogDir naming it", leaves, stats, err)
		}
		t.Log(err)
		if b, err := os.ReadFile(db); err != nil || string(b) != "unshipped records" {
			t.Fatalf("evidence.db after the refused restore: %q, %v", b, err)
		}
		if got := b.size(t); got != uint64(leaves) {
			t.Fatalf("after the refused restore the log holds %d leaves, want %d", got, leaves)
		}
	}
}

// TestRestoreMovesAsideUniqueNamesAndKeepsTheNewest: two restores within
// one second move the directory aside under two names, and only the
// newest KeepMovedAside directories moved aside are kept.
func TestRestoreMovesAsideUniqueNamesAndKeepsTheNewest(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	b.appendAll(t, records("a", 1, 100))
	at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	anchor.SetRestoreHooks(b.Log, func() time.Time { return at }, nil)
	// Older directories moved aside, and one that is not a restore's.
	for _, name := range []string{"log.behind-20250101T000000Z", "log.behind-20250101T000001Z", "log.behind-20250101T000001Z-2", "log.behind-notes"} {
		if err := os.Mkdir(filepath.Join(filepath.Dir(b.dir), name), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	first := b.restoreOK(t, a.Source())
	a.appendAll(t, records("a", 301, 100))
	second := b.restoreOK(t, a.Source())
	want := filepath.Join(filepath.Dir(b.dir), "log.behind-20261129T210000Z")
	if first.MovedAside != want || second.MovedAside != want+"-2" {
		t.Fatalf("moved aside to %q, then %q; want %q and %q", first.MovedAside, second.MovedAside, want, want+"-2")
	}
	for dir, n := range map[string]int{first.MovedAside: 100, second.MovedAside: 300} {
		if got := leavesOf(t, a.verifier, anchor.DirSource(dir), nil); len(got) != n {
			t.Fatalf("%s holds %d leaves, want %d", dir, len(got), n)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(b.dir))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if got := strings.Join(left, " "); got != "log log.behind-20250101T000001Z-2 log.behind-20261129T210000Z log.behind-20261129T210000Z-2 log.behind-notes" {
		t.Fatalf("beside the log after two restores: %s", got)
	}
	if len(first.RemovedAside) != 1 || len(second.RemovedAside) != 1 {
		t.Fatalf("removed %v, then %v; want one each", first.RemovedAside, second.RemovedAside)
	}
}

// TestRestoreThroughASymlinkKeepsTheLink: a log directory that is a
// symbolic link stays one: the directory it names is restored.
func TestRestoreThroughASymlinkKeepsTheLink(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	base := t.TempDir()
	real := filepath.Join(base, "disk", "log")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "log")
	if err := os.Symlink(filepath.Join("disk", "log"), link); err != nil {
		t.Fatal(err)
	}
	b := openLogWith(t, link, a.signer, a.vkey)
	if st := b.restoreOK(t, a.Source()); st.To != 300 {
		t.Fatalf("restore through a link: %+v", st)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s after the restore: %v, %v; want the symbolic link", link, fi.Mode(), err)
	}
	if got := leavesOf(t, a.verifier, anchor.DirSource(real), nil); len(got) != 300 {
		t.Fatalf("the link's directory holds %d leaves, want 300", len(got))
	}
	if got := b.size(t); got != 300 {
		t.Fatalf("the log holds %d leaves, want 300", got)
	}
}

// TestRestoreWhoseRenameFailsLeavesNoEmptyLog: when the rebuilt directory
// cannot take the log's place, the log's directory is put back as it was;
// when that fails too, the log is not opened on a new empty directory,
// neither by the log nor by Open, until an operator puts one in place.
func TestRestoreWhoseRenameFailsLeavesNoEmptyLog(t *testing.T) {
	t.Parallel()
	a := openLog(t)
	a.appendAll(t, records("a", 1, 300))
	failInto := func(dir string, also func(to string) bool) func(string, string) error {
		return func(from, to string) error {
			if to == dir && (strings.HasSuffix(from, ".restoring") || also(to)) {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("injected failure")}
			}
			return os.Rename(from, to)
		}
	}

	b := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	b.appendAll(t, records("a", 1, 100))
	anchor.SetRestoreHooks(b.Log, nil, failInto(b.dir, func(string) bool { return false }))
	if _, err := b.Restore(context.Background(), a.Source(), a.verifier); err == nil || !strings.Contains(err.Error(), "put back as it was") {
		t.Fatalf("restore whose last rename fails: %v, want the directory put back", err)
	}
	if got := b.size(t); got != 100 {
		t.Fatalf("after the failed restore the log holds %d leaves, want its 100", got)
	}

	c := openLogWith(t, filepath.Join(t.TempDir(), "log"), a.signer, a.vkey)
	c.appendAll(t, records("a", 1, 100))
	anchor.SetRestoreHooks(c.Log, nil, failInto(c.dir, func(string) bool { return true }))
	_, err := c.Restore(context.Background(), a.Source(), a.verifier)
	if !errors.Is(err, anchor.ErrNotOpen) {
		t.Fatalf("restore whose renames back fail too: %v, want ErrNotOpen", err)
	}
	t.Log(err)
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after the failed restore: %v; want no directory", c.dir, err)
	}
	if _, err := c.Size(context.Background()); !errors.Is(err, anchor.ErrNotOpen) {
		t.Fatalf("the log after the failed restore: %v, want ErrNotOpen", err)
	}
	if _, err := anchor.Open(context.Background(), anchor.Config{Dir: c.dir, Signer: a.signer}); !errors.Is(err, anchor.ErrNotOpen) {
		t.Fatalf("Open of the missing directory beside a rebuilt one: %v, want ErrNotOpen", err)
	}
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after the refused Open: %v; want no directory", c.dir, err)
	}
}
