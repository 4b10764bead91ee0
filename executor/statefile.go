package executor

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// A file of signed-in state: what save_storage_state writes and
// load_storage_state reads, in the manifest's state directory. It is as
// sensitive as a password, so it is opened only through an os.Root of
// the directory (no path, "..", or symlink leads out), written
// owner-only (0600) and atomically (a temporary file renamed over the
// old: a save that fails leaves the old file whole), and a file any
// other user could read is refused, as ssh refuses such a private key.

// maxStateBytes bounds a state file: far more than the cookies and local
// storage of a few sites (a browser keeps 5 MiB of local storage per
// origin; a file that large is refused rather than read).
const maxStateBytes = 8 << 20

// stateVersion is the version of the file format.
const stateVersion = 1

// storageState is a state file's contents.
type storageState struct {
	Version int `json:"version"`
	// SavedBy and SavedAt: the session that saved the state and when
	// (RFC 3339, UTC), shown to the human asked about a load; absent
	// from a file written by hand.
	SavedBy string        `json:"saved_by,omitempty"`
	SavedAt string        `json:"saved_at,omitempty"`
	Cookies []stateCookie `json:"cookies"`
	Origins []stateOrigin `json:"origins"`
}

// stateCookie is one cookie, as the browser reported it.
type stateCookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"` // seconds since the epoch; -1: a session cookie
	HTTPOnly bool    `json:"http_only"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"same_site,omitempty"`
}

// stateOrigin is the local storage of one origin.
type stateOrigin struct {
	Origin       string      `json:"origin"`
	LocalStorage []stateItem `json:"local_storage"`
}

// stateItem is one local storage item.
type stateItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// stateFileName is the file a state's name is kept in.
func stateFileName(name string) string { return name + ".json" }

// errNoStateDir: the manifest declares no state directory.
var errNoStateDir = errors.New("the manifest has no [browser.files] state_dir")

// openStateDir opens the manifest's state directory, checked owner-only
// again now (it may have changed since the manifest loaded).
func openStateDir(f toolclad.Files) (*os.Root, error) {
	if f.StateDir == "" {
		return nil, errNoStateDir
	}
	if err := toolclad.CheckStateDir(f.StateDir); err != nil {
		return nil, fmt.Errorf("the state directory: %w", err)
	}
	root, err := os.OpenRoot(f.StateDir)
	if err != nil {
		return nil, fmt.Errorf("open the state directory: %w", err)
	}
	return root, nil
}

// readState reads and checks the state file of name, and describes it
// for the record (name, size, SHA-256).
func readState(f toolclad.Files, name string) (*storageState, evidence.FileRef, error) {
	file := stateFileName(name)
	ref := evidence.FileRef{Direction: "state_load", Name: file}
	root, err := openStateDir(f)
	if err != nil {
		return nil, ref, err
	}
	defer root.Close()
	// Opened without waiting on a FIFO; the checks are of the file
	// opened (so that a file swapped in after them is not the one read),
	// and the name must be that file itself, not a symlink to it.
	src, err := root.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, ref, fmt.Errorf("no saved state %q (no %s in the state directory)", name, file)
	case err != nil:
		if named, lerr := root.Lstat(file); lerr == nil && !named.Mode().IsRegular() {
			// A symlink out of the directory, say.
			return nil, ref, fmt.Errorf("state %q: %s is not a regular file", name, file)
		}
		return nil, ref, fmt.Errorf("state %q: %v", name, unwrapPath(err))
	}
	defer src.Close()
	info, err := src.Stat()
	named, lerr := root.Lstat(file)
	switch {
	case err != nil:
		return nil, ref, fmt.Errorf("state %q: %v", name, unwrapPath(err))
	case !info.Mode().IsRegular() || lerr != nil || !os.SameFile(info, named):
		return nil, ref, fmt.Errorf("state %q: %s is not a regular file", name, file)
	case info.Mode().Perm()&0o077 != 0:
		return nil, ref, fmt.Errorf("state %q: %s has mode %04o, readable or writable by others than its owner: refused, as ssh refuses such a key (chmod 600)", name, file, info.Mode().Perm())
	case info.Size() > maxStateBytes:
		return nil, ref, fmt.Errorf("state %q: %s is %d bytes, over the %d a state file may have", name, file, info.Size(), maxStateBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(src, maxStateBytes+1))
	if err != nil {
		return nil, ref, fmt.Errorf("state %q: read %s: %w", name, file, err)
	}
	if len(raw) > maxStateBytes {
		return nil, ref, fmt.Errorf("state %q: %s grew past %d bytes while it was read", name, file, maxStateBytes)
	}
	sum := sha256.Sum256(raw)
	ref.Size, ref.SHA256 = int64(len(raw)), hex.EncodeToString(sum[:])
	st, err := parseState(raw)
	if err != nil {
		return nil, ref, fmt.Errorf("state %q: %s is not a state file save_storage_state wrote: %w", name, file, err)
	}
	return st, ref, nil
}

// parseState decodes a state file strictly: unknown members, a wrong
// version, a cookie without a name or domain, an origin that is not an
// http(s) origin are errors (none says a value).
func parseState(raw []byte) (*storageState, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var st storageState
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("version %d, want %d", st.Version, stateVersion)
	}
	for i, c := range st.Cookies {
		if c.Name == "" || strings.TrimPrefix(c.Domain, ".") == "" {
			return nil, fmt.Errorf("cookie %d has no name or no domain", i+1)
		}
	}
	for i, o := range st.Origins {
		if canon, ok := webOrigin(o.Origin); !ok || canon != o.Origin {
			return nil, fmt.Errorf("origin %d is not an http or https origin (scheme://host[:port])", i+1)
		}
	}
	return &st, nil
}

// webOrigin is the origin of an http or https URL, as the browser writes
// it (scheme://host[:port]).
func webOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

// sites are the URLs the state would be sent to: each cookie's host
// (https for a secure cookie) and each origin.
func (st *storageState) sites() []string {
	seen := map[string]bool{}
	var out []string
	add := func(u string) {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, c := range st.Cookies {
		add(c.site())
	}
	for _, o := range st.Origins {
		add(o.Origin + "/")
	}
	return out
}

// site is the URL a cookie is judged by: its host, over https for a
// secure cookie, http for another.
func (c stateCookie) site() string {
	scheme, host := "http", strings.TrimPrefix(c.Domain, ".")
	if c.Secure {
		scheme = "https"
	}
	if strings.Contains(host, ":") {
		host = "[" + strings.Trim(host, "[]") + "]"
	}
	return scheme + "://" + host + "/"
}

// writeState writes st as the state file of name, owner-only and
// atomically, and describes the file written. Unless replace, a file of
// that name already there is an error, and stays as it was.
func writeState(f toolclad.Files, name string, st *storageState, replace bool) (evidence.FileRef, error) {
	file := stateFileName(name)
	ref := evidence.FileRef{Direction: "state_save", Name: file}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return ref, err
	}
	raw = append(raw, '\n')
	if len(raw) > maxStateBytes {
		return ref, fmt.Errorf("the state is %d bytes, over the %d a state file may have: nothing was saved", len(raw), maxStateBytes)
	}
	root, err := openStateDir(f)
	if err != nil {
		return ref, err
	}
	defer root.Close()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + file + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return ref, fmt.Errorf("write state %q: %v", name, unwrapPath(err))
	}
	_, err = out.Write(raw)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil && replace:
		err = root.Rename(tmp, file)
	case err == nil:
		// A link fails where the name exists; the temporary name
		// then goes either way.
		if err = root.Link(tmp, file); errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("a state %q was saved meanwhile, and replacing it was not approved", name)
		}
		_ = root.Remove(tmp)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return ref, fmt.Errorf("write state %q (the old file, if any, is unchanged): %v", name, unwrapPath(err))
	}
	sum := sha256.Sum256(raw)
	ref.Size, ref.SHA256 = int64(len(raw)), hex.EncodeToString(sum[:])
	return ref, nil
}
