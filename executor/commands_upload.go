package executor

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// upload_file attaches a file of the manifest's upload directory to a file
// input. The file is opened through an os.Root of the directory, which
// refuses every path that leaves it (absolute paths, "..", symlinks that
// point out), then copied into a directory of the session's own, and the
// copy is what is hashed and what the browser gets: a file changed or
// swapped after the gate decided cannot reach the page.

// maxUploadBytes bounds a file upload_file attaches.
const maxUploadBytes = 100 << 20

// observeUpload finds the file input and reads the file the call names.
func (s *session) observeUpload(ctx context.Context, args map[string]any) *gate.Element {
	el, named, err := s.target(ctx, args)
	ef := &gate.Element{Named: named, Label: el.label, Err: err}
	if err != nil {
		return ef
	}
	var isFile bool
	if err := el.call(ctx, fileInputJS, &isFile); err != nil || !isFile {
		ef.Err = fmt.Errorf("%s is not a file input (<input type=file>)", el.label)
		return ef
	}
	names := uploadNames(args)
	if len(names) > 1 {
		var multiple bool
		if err := el.call(ctx, `function() { return Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'multiple').get.call(this); }`, &multiple); err != nil || !multiple {
			ef.Err = fmt.Errorf("%s takes one file (it has no multiple attribute), and the call gives %d", el.label, len(names))
			return ef
		}
	}
	for _, name := range names {
		file, err := s.copyUpload(name)
		if err != nil {
			ef.Err = err
			dropFiles(ef.Files)
			ef.Files = nil
			return ef
		}
		ef.Files = append(ef.Files, file)
	}
	ef.File = ef.Files[0]
	return ef
}

// uploadNames are the files an upload_file call names: its file, or its
// files.
func uploadNames(args map[string]any) []string {
	if name, _ := args["file"].(string); name != "" {
		return []string{name}
	}
	list, _ := args["files"].([]any)
	names := make([]string, 0, len(list))
	for _, v := range list {
		if name, ok := v.(string); ok {
			names = append(names, name)
		}
	}
	return names
}

// fileInputJS reports whether the element (this) is an <input type=file>.
const fileInputJS = `function() {
  const get = (p, k) => Object.getOwnPropertyDescriptor(p, k).get;
  return get(Element.prototype, 'localName').call(this) === 'input' && get(HTMLInputElement.prototype, 'type').call(this) === 'file';
}`

// copyUpload copies the named file of the upload directory into the
// session's file directory and describes the copy.
func (s *session) copyUpload(name string) (*gate.File, error) {
	dir := s.manifest.Browser.Files.UploadDir
	if dir == "" {
		return nil, errors.New("the manifest has no [browser.files] upload_dir")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the upload directory: %w", err)
	}
	defer root.Close()
	// The kind of file first: opening a FIFO (or a device) would block.
	if info, err := root.Stat(name); err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("file %q is not a regular file", name)
	}
	src, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("file %q: not a file inside the upload directory (%v)", name, unwrapPath(err))
	}
	defer src.Close()
	info, err := src.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("file %q: %w", name, err)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("file %q is not a regular file", name)
	case info.Size() > maxUploadBytes:
		return nil, fmt.Errorf("file %q is %d bytes, over the %d an upload may have", name, info.Size(), maxUploadBytes)
	}
	into, err := s.fileDir()
	if err != nil {
		return nil, err
	}
	// The copy keeps the file's own name: the page sees it as the
	// uploaded file's name.
	sub, err := os.MkdirTemp(into, "up-")
	if err != nil {
		return nil, err
	}
	dst, err := os.OpenFile(filepath.Join(sub, filepath.Base(name)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), io.LimitReader(src, maxUploadBytes+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxUploadBytes {
		err = fmt.Errorf("file %q grew past %d bytes while it was read", name, maxUploadBytes)
	}
	if err != nil {
		os.RemoveAll(sub)
		return nil, fmt.Errorf("copy file %q: %w", name, err)
	}
	holds, err := s.secrets.Load().HeldIn(dst.Name())
	if err != nil {
		os.RemoveAll(sub)
		return nil, fmt.Errorf("read file %q for secrets: %w", name, err)
	}
	return &gate.File{FileRef: evidence.FileRef{Direction: "upload", Name: filepath.ToSlash(name), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))},
		Copy: dst.Name(), Holds: holds}, nil
}

// dropUpload removes the private copy of the file an upload_file call
// read when the browser was not given it (the call was refused, or read
// the file again after an approval): only a copy attached to an input
// stays, until the session ends, for the page to send.
func dropUpload(f *facts) {
	if f != nil && f.Element != nil {
		dropFiles(f.Element.Files)
	}
}

// dropFiles removes the private copies of files read for an upload.
func dropFiles(files []*gate.File) {
	for _, up := range files {
		if up != nil && up.Copy != "" {
			_ = os.RemoveAll(filepath.Dir(up.Copy))
		}
	}
}

func actUploadFile(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	if f == nil || f.Element == nil || len(f.Element.Files) == 0 {
		return output{}, errors.New("the file was not read by the gate")
	}
	el, _, err := s.target(ctx, args)
	if err != nil {
		return output{}, err
	}
	var paths, said []string
	var refs []evidence.FileRef
	for _, file := range f.Element.Files {
		if len(file.Holds) > 0 {
			// As for a typed value: from before the page has the file, it
			// may send only to the secrets' domains.
			s.egress.bound.Bind(hostOf(f.State.URL), file.Holds, s.secrets.Load())
			defer s.typed.Note(file.Holds, s.tab.watch.navigationCount())
		}
		paths = append(paths, file.Copy)
		refs = append(refs, file.FileRef)
		said = append(said, fmt.Sprintf("%s (%d bytes, sha256 %s)", pagetext.Value(file.Name), file.Size, file.SHA256))
	}
	attach := setInputFiles
	if s.manifest.Browser.Remote != nil {
		attach = sendInputFiles
	}
	if err := attach(ctx, el, paths); err != nil {
		return output{}, fmt.Errorf("attach %s to %s: %w", strings.Join(uploadNames(args), ", "), el.label, err)
	}
	return output{Text: fmt.Sprintf("attached %s to %s", strings.Join(said, " and "), pagetext.Value(el.label)), Files: refs}, nil
}

// setInputFiles gives a file input the files at paths, which the browser
// reads itself: a browser on this host.
func setInputFiles(ctx context.Context, el element, paths []string) error {
	_, err := chromedp.Call(el.in(ctx), dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, ObjectID: el.object})
	return err
}

// sendInputFile gives a file input the file at path by its bytes, sent
// over the DevTools connection: a browser on another host cannot read a
// path of this one. The file is made in the isolated world (whose File
// and DataTransfer the page cannot redefine) and set as the input's
// files, with the input and change events the browser fires when a user
// chooses a file.
func sendInputFiles(ctx context.Context, el element, paths []string) error {
	var files []sentFile
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		name := filepath.Base(path)
		files = append(files, sentFile{Name: name, Type: mime.TypeByExtension(filepath.Ext(name)), Content: base64.StdEncoding.EncodeToString(b)})
	}
	return el.call(ctx, sendFileJS, nil, files)
}

// sentFile is one file sendFileJS makes: its name, MIME type and base64
// content.
type sentFile struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Content string `json:"content"`
}

// sendFileJS sets a file input's (this) files to the files given (each
// a name, a type and base64 content), and fires input and change. It
// throws if the element is no file input now (the page may have changed
// its type since the gate looked), or did not take the files.
const sendFileJS = `function(sent) {
  const get = (p, k) => Object.getOwnPropertyDescriptor(p, k).get;
  if (get(Element.prototype, 'localName').call(this) !== 'input' || get(HTMLInputElement.prototype, 'type').call(this) !== 'file')
    throw new Error('the element is no longer a file input');
  const dt = new DataTransfer();
  for (const {name, type, content} of sent) {
    const bin = atob(content), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], name, {type}));
  }
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'files').set.call(this, dt.files);
  const files = get(HTMLInputElement.prototype, 'files').call(this);
  if (files.length !== sent.length || sent.some((f, i) => files[i].name !== f.name)) throw new Error('the input did not take the files');
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
}`

// approvedFileOf is the file a call read that a human approves as it
// was read: an upload_file call's, or the state load_storage_state read
// (nil: none).
func approvedFileOf(f *facts) *evidence.FileRef {
	if up := uploadOf(f); up != nil {
		return &up.FileRef
	}
	if f != nil && f.StorageState != nil && f.StorageState.Err == nil && f.StorageState.File.SHA256 != "" {
		return &f.StorageState.File
	}
	return nil
}

// uploadOf is the files an upload_file call read as one, for an
// approval: their sizes summed and their digests joined by commas (one
// file: its own), so that a human approves these files and a change to
// any is another call. Nil: none read.
func uploadOf(f *facts) *gate.File {
	if f == nil || f.Element == nil || len(f.Element.Files) == 0 {
		return nil
	}
	if len(f.Element.Files) == 1 {
		return f.Element.Files[0]
	}
	all := &gate.File{}
	var sums []string
	for _, file := range f.Element.Files {
		all.Size += file.Size
		sums = append(sums, file.SHA256)
	}
	all.SHA256 = strings.Join(sums, ",")
	return all
}
