package evidence

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// reportOutputHead is how many bytes of each output the HTML report shows:
// enough to see what a call returned; the record holds the rest.
const reportOutputHead = 2048

// reportTime is the time format of the HTML report.
const reportTime = "2006-01-02 15:04:05.000 UTC"

//go:embed report.html
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Parse(reportTemplate))

// HTMLOptions configures Store.ExportHTML. The zero value reports every
// session, leaves signatures unchecked and stamps the export with
// time.Now.
type HTMLOptions struct {
	// Session limits the report to one session; "" reports them all. The
	// verification status always covers the whole file.
	Session string
	// PublicKey, when set, has every head signature checked as
	// VerifyWithKey does; without it signed heads are shown as not checked.
	PublicKey ed25519.PublicKey
	// Source names the log in the report's header (its file name).
	Source string
	// Now gives the time of export; time.Now when nil.
	Now func() time.Time
}

// ExportHTML writes one self-contained HTML report of the log to w: a
// header with the source, the time of export and the verification status
// ("intact", or every problem, each naming its session and record), then
// per session its principal, first and last time, record count, head and
// signature status, then every interaction: seq, time, tool and command,
// arguments, the decision (stage, rule, policy ids, reasons, approval),
// the page state before and after, blocked requests, permission requests
// granted, the head of the
// output, and the screenshot, embedded as a data: URI.
//
// The file loads nothing (no script, no external resource; its
// Content-Security-Policy forbids both) and every value is escaped by
// html/template, since titles, outputs and arguments come from web pages
// and agents; bidirectional, zero-width and control characters in them are
// shown as \uXXXX escapes (Visible). Verification and rendering read one consistent snapshot.
// It returns the verification report, so that a caller can fail on it; a
// log that does not verify is still rendered, problems marked.
func (s *Store) ExportHTML(w io.Writer, opts HTMLOptions) (*Report, error) {
	if opts.PublicKey != nil && len(opts.PublicKey) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("export evidence: %w: public key has %d bytes, want %d", ErrBadKey, len(opts.PublicKey), ed25519.PublicKeySize)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var rep *Report
	err := s.db.View(func(tx *bolt.Tx) error {
		v, err := verifyTx(tx, opts.PublicKey)
		if err != nil {
			return err
		}
		rep = &v.report
		r := &reportWriter{tx: tx, v: v, w: bufio.NewWriterSize(w, 64<<10)}
		if err := r.write(opts, now().UTC()); err != nil {
			return err
		}
		return r.w.Flush()
	})
	if err != nil {
		return nil, fmt.Errorf("export evidence: %w", err)
	}
	return rep, nil
}

// reportWriter renders the report inside one read transaction.
type reportWriter struct {
	tx  *bolt.Tx
	v   *verifier
	w   *bufio.Writer
	buf bytes.Buffer // one piece of the report, before Visible
	// problems by session and seq (0: the session as a whole).
	problems map[string]map[uint64][]string
}

type reportHeader struct {
	Source   string
	Exported string
	Version  int
	Report   *Report
	Problems []reportProblem
	Only     string
	Sessions []*reportSession
	// Refusals are the refused calls of the sessions shown, linked.
	Refusals []reportRefusal
}

// reportRefusal is a refused call in the report's list of refusals.
type reportRefusal struct {
	Anchor, Session, Command, Stage, Reason string
	Seq                                     uint64
}

// reportConfig is a configuration a session's records name: the manifest
// and the policy files, as the daemon stored them (JSON with manifest
// {path, source} and policies {name: text}).
type reportConfig struct {
	SHA256, Manifest, Source string
	Policies                 []string
	Unreadable               string
}

type reportSession struct {
	Anchor    string
	ID        string
	Principal string
	First     string
	Last      string
	Records   int
	Head      string
	HeadSeq   uint64
	Signature string
	Problems  []string // about the session as a whole
	problems  bool     // any problem in the session
	Summary   string
	Configs   []reportConfig
	refusals  []reportRefusal
}

type reportRecord struct {
	Anchor        string
	Seq           uint64
	Unreadable    string
	Time          string
	Duration      string
	Interaction   string // "interaction N", "interaction N (continuation, not counted)", or "not counted" for a call refused before it counted
	Tool, Command string
	Kind          string // "" for a call
	Args          string
	Decision      Decision
	// RecordsOnly: a session_end record that refused nothing
	// (Envelope.RecordsOnly), shown as RECORDED, not DENIED.
	RecordsOnly    bool
	ApprovalAt     string
	Before, After  []reportKV
	Blocked        []BlockedRequest
	BlockedDropped int
	// PermissionsGranted are the permission requests the record lists as
	// granted (spec revision 12), shown apart from the refusals.
	PermissionsGranted        []PermissionGrant
	PermissionsGrantedDropped int
	Error                     string
	Output                    string
	OutputRest                int
	OutputTruncated           bool
	OutputSHA256              string
	Hash, PrevHash            string
	ConfigSHA256              string
	ScreenshotSHA256          string
	Screenshot                template.URL // a data: URI of bytes whose type was sniffed as an image
	ScreenshotNote            string
	// Frames are the screencast frames of the call, in order, and Traces
	// the traces it recorded (rev. 17).
	Frames   []reportBlob
	Traces   []reportBlob
	Problems []string
}

// reportBlob is one blob of a record's recording: a frame as a data: URI
// (or why there is none), a trace by its hash and size.
type reportBlob struct {
	SHA256 string
	Size   int
	Image  template.URL
	Note   string
}

type reportKV struct{ Key, Value string }

// reportProblem is a problem as listed in the header, linked to the
// session or record it names when that is in the report.
type reportProblem struct{ Text, Anchor string }

func (r *reportWriter) write(opts HTMLOptions, exported time.Time) error {
	r.problems = map[string]map[uint64][]string{}
	for _, p := range r.v.report.Problems {
		if p.Session == "" {
			continue
		}
		if r.problems[p.Session] == nil {
			r.problems[p.Session] = map[uint64][]string{}
		}
		r.problems[p.Session][p.Seq] = append(r.problems[p.Session][p.Seq], p.Reason)
	}
	all := sessionsTx(r.tx)
	var sessions []*reportSession
	for i, sum := range all {
		if opts.Session != "" && sum.ID != opts.Session {
			continue
		}
		sessions = append(sessions, r.session(i+1, sum))
	}
	if opts.Session != "" && len(sessions) == 0 {
		return fmt.Errorf("%w: %q", ErrUnknownSession, opts.Session)
	}
	anchors := map[string]string{}
	for _, s := range sessions {
		anchors[s.ID] = s.Anchor
	}
	problems := make([]reportProblem, 0, len(r.v.report.Problems))
	for _, p := range r.v.report.Problems {
		rp := reportProblem{Text: p.String()}
		if a, ok := anchors[p.Session]; ok {
			rp.Anchor = a
			if p.Seq > 0 && r.tx.Bucket(bucketSessions).Bucket([]byte(p.Session)).Get(seqKey(p.Seq)) != nil {
				rp.Anchor = a + "-r" + strconv.FormatUint(p.Seq, 10)
			}
		}
		problems = append(problems, rp)
	}
	var refusals []reportRefusal
	for _, s := range sessions {
		refusals = append(refusals, s.refusals...)
	}
	err := r.execute("header", reportHeader{
		Source: opts.Source, Exported: exported.Format(reportTime), Version: FormatVersion,
		Report: &r.v.report, Problems: problems, Only: opts.Session, Sessions: sessions, Refusals: refusals,
	})
	if err != nil {
		return err
	}
	for _, sess := range sessions {
		if err := r.execute("session", sess); err != nil {
			return err
		}
		b := r.tx.Bucket(bucketSessions).Bucket([]byte(sess.ID))
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return nil
			}
			return r.execute("record", r.record(sess, k, v))
		})
		if err != nil {
			return err
		}
		if err := r.execute("session-end", nil); err != nil {
			return err
		}
	}
	return r.execute("footer", nil)
}

// execute renders one piece of the report and writes it through Visible:
// every value in it, whichever field it came from (titles, URLs, outputs,
// arguments, reasons, errors, blocked requests, file names), shows its
// bidirectional, zero-width and control characters as \uXXXX escapes, as
// the console and `evidence show` do. The template's own text holds none
// of them, and an escape is plain text in any HTML context.
func (r *reportWriter) execute(name string, data any) error {
	r.buf.Reset()
	if err := reportTmpl.ExecuteTemplate(&r.buf, name, data); err != nil {
		return err
	}
	_, err := r.w.WriteString(Visible(r.buf.String()))
	return err
}

func (r *reportWriter) session(n int, sum SessionSummary) *reportSession {
	s := &reportSession{
		Anchor: "s" + strconv.Itoa(n), ID: sum.ID, Records: sum.Records,
		First: sum.First.UTC().Format(reportTime), Last: sum.Last.UTC().Format(reportTime),
		Head: sum.Head, HeadSeq: sum.HeadSeq,
		Signature: r.v.sigStatus[sum.ID], Problems: r.problems[sum.ID][0],
		problems: len(r.problems[sum.ID]) > 0,
	}
	if s.Signature == "" {
		s.Signature = "no head"
	}
	var recs []*Envelope
	seen := map[string]bool{}
	_ = r.tx.Bucket(bucketSessions).Bucket([]byte(sum.ID)).ForEach(func(k, v []byte) error {
		if v == nil {
			return nil
		}
		e, err := decodeEnvelope(v)
		if err != nil {
			return nil // shown as unreadable in its row
		}
		recs = append(recs, e)
		if e.Kind != KindSessionEnd && !e.Decision.Allowed {
			reason := strings.Join(e.Decision.Reasons, "; ")
			if reason == "" {
				reason = e.Decision.Scope
			}
			s.refusals = append(s.refusals, reportRefusal{Anchor: s.Anchor + "-r" + strconv.FormatUint(e.Seq, 10), Session: sum.ID,
				Seq: e.Seq, Command: e.Command, Stage: string(e.Decision.Stage), Reason: reason})
		}
		if c := e.ConfigSHA256; c != "" && !seen[c] {
			seen[c] = true
			s.Configs = append(s.Configs, r.config(c))
		}
		return nil
	})
	if len(recs) > 0 {
		s.Principal = recs[0].Principal
	}
	s.Summary = summaryOf(recs)
	return s
}

// config reads a stored configuration for the report.
func (r *reportWriter) config(sha string) reportConfig {
	c := reportConfig{SHA256: sha}
	raw := r.tx.Bucket(bucketConfigs).Get([]byte(sha))
	var stored struct {
		Manifest struct{ Path, Source string } `json:"manifest"`
		Policies map[string]string             `json:"policies"`
	}
	if raw == nil {
		c.Unreadable = "not in the file"
		return c
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		c.Unreadable = "not a configuration this report reads: " + err.Error()
		return c
	}
	c.Manifest, c.Source = stored.Manifest.Path, stored.Manifest.Source
	for name := range stored.Policies {
		c.Policies = append(c.Policies, name)
	}
	slices.Sort(c.Policies)
	return c
}

func (r *reportWriter) record(sess *reportSession, k, raw []byte) reportRecord {
	var seq uint64
	if len(k) == 8 {
		seq = binary.BigEndian.Uint64(k)
	}
	rec := reportRecord{Anchor: sess.Anchor + "-r" + strconv.FormatUint(seq, 10), Seq: seq}
	if seq > 0 {
		rec.Problems = r.problems[sess.ID][seq]
	}
	e, err := decodeEnvelope(raw)
	if err != nil {
		rec.Unreadable = err.Error()
		return rec
	}
	rec.Time = e.Time.UTC().Format(reportTime)
	rec.Duration = (time.Duration(e.DurationMicros) * time.Microsecond).String()
	// A call refused before it counted as an interaction (bad arguments,
	// an expired session) has count 0: there is no "interaction 0".
	// A free continuation (rev. 13) did not count either: it carries the
	// count as it stood, which the call before it made.
	rec.Interaction = "not counted"
	if e.InteractionCount > 0 {
		rec.Interaction = "interaction " + strconv.Itoa(e.InteractionCount)
		if e.FreeContinuation != nil {
			rec.Interaction += " (continuation, not counted)"
		}
	}
	rec.Tool, rec.Command, rec.Kind = e.Tool, e.Command, e.Kind
	if len(e.Args) > 0 {
		rec.Args = indentJSON(e.Args)
	}
	rec.Decision, rec.RecordsOnly = e.Decision, e.RecordsOnly()
	if a := e.Decision.Approval; a != nil {
		rec.ApprovalAt = a.At.UTC().Format(reportTime)
	}
	rec.Before, rec.After = stateKVs(e.Before), stateKVs(e.After)
	rec.Blocked, rec.BlockedDropped = e.Blocked, e.BlockedDropped
	rec.PermissionsGranted, rec.PermissionsGrantedDropped = e.PermissionsGranted, e.PermissionsGrantedDropped
	rec.Error = e.Error
	rec.Output, rec.OutputRest = outputHead(e.Output, reportOutputHead)
	rec.OutputTruncated = e.OutputTruncated
	rec.OutputSHA256, rec.Hash, rec.PrevHash, rec.ConfigSHA256 = e.OutputSHA256, e.Hash, e.PrevHash, e.ConfigSHA256
	if e.ScreenshotSHA256 != "" {
		rec.ScreenshotSHA256 = e.ScreenshotSHA256
		rec.Screenshot, rec.ScreenshotNote = r.image(bucketScreenshots, "screenshot", e.ScreenshotSHA256)
	}
	for _, ref := range e.Recording {
		b := reportBlob{SHA256: ref.SHA256, Size: ref.Size}
		if ref.Kind == RecordingTrace {
			rec.Traces = append(rec.Traces, b)
			continue
		}
		b.Image, b.Note = r.image(bucketRecordings, "frame", ref.SHA256)
		rec.Frames = append(rec.Frames, b)
	}
	return rec
}

// image returns the image stored in bucket as a data: URI, or why there
// is none (what names it). Only bytes sniffed as an image become a URI:
// the type in the URI is then true, and base64 leaves nothing to escape.
func (r *reportWriter) image(bucket []byte, what, sum string) (template.URL, string) {
	var img []byte
	if b := r.tx.Bucket(bucket); b != nil {
		img = b.Get([]byte(sum))
	}
	if img == nil {
		return "", what + " " + sum + " missing from the log"
	}
	typ := ImageType(img)
	if typ == "" {
		return "", fmt.Sprintf("%s %s: %d stored bytes that are not an image (%s)", what, sum, len(img), http.DetectContentType(img))
	}
	return template.URL("data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(img)), ""
}

// ImageType is the MIME type of a stored screenshot, sniffed from its
// bytes (PNG, JPEG and WebP, as screenshot captures them, or GIF), or ""
// when they are not an image of those types. A screenshot's type is in
// its bytes; no record member says it.
func ImageType(img []byte) string {
	typ := http.DetectContentType(img)
	if !slices.Contains([]string{"image/png", "image/jpeg", "image/gif", "image/webp"}, typ) {
		return ""
	}
	return typ
}

// stateKVs lists page state in key order, values as text.
func stateKVs(m map[string]any) []reportKV {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]reportKV, 0, len(keys))
	for _, k := range keys {
		out = append(out, reportKV{k, valueText(m[k])})
	}
	return out
}

// valueText renders a decoded JSON value: strings and numbers as
// themselves, the rest as compact JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// indentJSON renders v as indented JSON without HTML escaping (the
// template escapes).
func indentJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// outputHead returns the first limit bytes of out, cut on a UTF-8
// boundary, and how many bytes it left out.
func outputHead(out string, limit int) (string, int) {
	if len(out) <= limit {
		return out, 0
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut], len(out) - cut
}
