package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/browsergate/browsergate/evidence"
)

// Saving a file into the download directory: under a name made safe
// (fileNaming), never over a file already there, its bytes staged and
// hashed first so that the name shows only whole files. A page's downloads
// (downloads.go), the user's own in their profile (guard_downloads.go),
// and download and download_file (saveResponse, commands_download.go) all
// save through it.

// maxFileNameBytes bounds a saved file's name.
const maxFileNameBytes = 120

// sanitizeFileName makes a name a page suggested safe to save under: its
// last path element only (either slash), no leading dots, letters, digits
// and " .-_()+,=@" only (others become "_"), at most maxFileNameBytes
// bytes with its extension kept, and "download" when nothing is left.
func sanitizeFileName(name string) string {
	return cleanFileName(name, func(r rune) bool {
		return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" .-_()+,=@", r))
	}, maxFileNameBytes)
}

// cleanFileName is name's last path element (either slash), every
// character keep refuses replaced by "_", without leading dots or spaces
// and trailing ones, at most max bytes with its extension kept (an
// extension of up to 16 bytes), and "download" when nothing is left.
func cleanFileName(name string, keep func(rune) bool, max int) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if keep(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name = strings.TrimRight(strings.TrimLeft(b.String(), ". "), ". ")
	if len(name) > max {
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		name = truncateUTF8(name[:len(name)-len(ext)], max-len(ext)) + ext
	}
	if name == "" {
		name = "download"
	}
	return name
}

// truncateUTF8 cuts s to at most n bytes, at a character boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// saveFile copies src (at most max bytes) into dir under the sanitised
// name, or "name (2).ext" … when that is taken: never over a file that is
// there. The bytes go to a hidden temporary file first, which becomes the
// name by a hard link (refused when the name exists) and is then removed:
// the name shows only whole files, and a failure leaves nothing behind.
// The content type is sniffed from the bytes.
func saveFile(dir, suggested string, src io.Reader, max int64) (evidence.FileRef, error) {
	return saveFileAs(dir, suggested, src, max, browserNaming)
}

// fileNaming is how a saved file is named: the suggested name made safe,
// and the name of the i-th file of that name (i >= 2).
type fileNaming struct {
	sanitize func(string) string
	numbered func(stem, ext string, i int) string
}

// browserNaming names the browser's downloads: sanitizeFileName, and
// "name (2).ext" as browsers do.
var browserNaming = fileNaming{
	sanitize: sanitizeFileName,
	numbered: func(stem, ext string, i int) string { return fmt.Sprintf("%s (%d)%s", stem, i, ext) },
}

// strictNaming names download_file's files as GAIA's design does: only
// [A-Za-z0-9._-], at most 200 characters, and "name_2.ext".
var strictNaming = fileNaming{
	sanitize: strictFileName,
	numbered: func(stem, ext string, i int) string { return fmt.Sprintf("%s_%d%s", stem, i, ext) },
}

// maxStrictName bounds a strictFileName.
const maxStrictName = 200

// strictFileName is GAIA's rule for a downloaded file's name: the last
// path element (either slash), every character outside [A-Za-z0-9._-]
// (control characters, spaces, any non-ASCII) replaced by "_", no leading
// dot, at most 200 characters with the extension kept, "download" when
// nothing is left.
func strictFileName(name string) string {
	return cleanFileName(name, func(r rune) bool {
		return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}, maxStrictName)
}

// saveFileAs is saveFile with the naming of the caller's kind.
func saveFileAs(dir, suggested string, src io.Reader, max int64, naming fileNaming) (evidence.FileRef, error) {
	st, err := stageFile(dir, suggested, src, max, naming)
	if err != nil {
		return st.ref, err
	}
	defer st.discard()
	return st.link()
}

// stagedFile is a file's bytes written, synced and hashed into a hidden
// .part file of the download directory: link gives it its name, and
// discard removes the .part (after link, only the name is left).
type stagedFile struct {
	ref    evidence.FileRef
	root   *os.Root
	tmp    string
	naming fileNaming
}

// stageFile writes src into the download directory under a hidden name.
// On an error nothing is left, and the returned file's ref has the
// sanitised name.
func stageFile(dir, suggested string, src io.Reader, max int64, naming fileNaming) (*stagedFile, error) {
	st := &stagedFile{ref: evidence.FileRef{Direction: "download", Name: naming.sanitize(suggested)}, naming: naming}
	sweepStaleStaging(dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return st, fmt.Errorf("open the download directory: %w", err)
	}
	tmp := newStagingName()
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		root.Close()
		return st, fmt.Errorf("write into the download directory: %w", unwrapPath(err))
	}
	st.root, st.tmp = root, tmp
	h := sha256.New()
	sniff := &headBuffer{max: 512}
	n, err := io.Copy(io.MultiWriter(out, h, sniff), io.LimitReader(src, max+1))
	if err == nil && n > max {
		err = fmt.Errorf("larger than max_download_bytes (%d bytes)", max)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		st.discard()
		return st, err
	}
	st.ref.Size, st.ref.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	st.ref.ContentType = http.DetectContentType(sniff.b)
	return st, nil
}

// link gives the staged bytes their name: the sanitised one, or the first
// free numbered one. A file already there is never replaced.
func (st *stagedFile) link() (evidence.FileRef, error) {
	ref := st.ref
	stem, ext := splitExt(ref.Name)
	for i := 1; i <= 1000; i++ {
		name := ref.Name
		if i > 1 {
			name = st.naming.numbered(stem, ext, i)
		}
		err := st.root.Link(st.tmp, name)
		if err == nil {
			ref.Name = name
			return ref, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return ref, fmt.Errorf("save %s: %w", name, unwrapPath(err))
		}
	}
	return ref, fmt.Errorf("save %s: the download directory has 1000 files of that name", ref.Name)
}

// discard removes the .part file and closes the directory (a nil or
// discarded file: nothing to do).
func (st *stagedFile) discard() {
	if st == nil || st.root == nil {
		return
	}
	_ = st.root.Remove(st.tmp)
	st.root.Close()
	st.root = nil
}

// splitExt splits a file name at its extension (".tar.gz" counts as ".gz").
func splitExt(name string) (string, string) {
	ext := filepath.Ext(name)
	if ext == name {
		ext = ""
	}
	return name[:len(name)-len(ext)], ext
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// unwrapPath is a path error's reason, without the path (which repeats
// the agent's argument).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
