package replay

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// Options are what the auditor gives a replay.
type Options struct {
	// PublicKey, when set, is the key the log's signed heads must verify
	// with before the log is trusted.
	PublicKey ed25519.PublicKey
	// Resolver resolves names for the replay's egress gate (nil: the
	// system's).
	Resolver egress.Resolver
	// Secrets says where this machine has the value of each recorded
	// secret: name -> "env:VAR" or "file:/abs/path" (see ParseSecret). A
	// secret not named here is not filled in, and a step that types it
	// is not replayed.
	Secrets map[string]string
}

// ParseSecret reads an auditor's NAME=env:VAR or NAME=file:PATH mapping
// and returns the name and its source for Options.Secrets, with a file
// path made absolute.
func ParseSecret(mapping string) (name, source string, err error) {
	name, src, ok := strings.Cut(mapping, "=")
	kind, where, ok2 := strings.Cut(src, ":")
	if !ok || !ok2 || name == "" || where == "" || kind != "env" && kind != "file" {
		return "", "", fmt.Errorf("%q: want NAME=env:VAR or NAME=file:PATH", mapping)
	}
	if kind == "file" {
		abs, err := filepath.Abs(where)
		if err != nil {
			return "", "", err
		}
		src = "file:" + abs
	}
	return name, src, nil
}

// Run replays the allowed calls of session from the evidence log at path,
// printing one line per step to out, and returns ErrDiffers when any step
// came out differently: the decision, the error, the final URL or title,
// or the output where the command's output is deterministic for a
// deterministic page (the lines that changed are printed under the step).
// Calls a human approved are approved again for the replay, as recorded;
// text typed into a password field is masked in the log, so such a step
// cannot be replayed and says so (a manifest secret, with
// Options.Secrets, makes it replayable). The file is opened read-only
// and closed before the first step runs; a file another process holds
// is read with Read from a copy (see Read).
func Run(path, session string, opts Options, out io.Writer) error {
	store, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	rec, err := Read(store, path, session, opts.PublicKey)
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return rec.Replay(opts, out)
}

// Recorded is one session as its log recorded it: its records and the
// configuration its calls ran under, read from a log that verifies.
type Recorded struct {
	// Session is the session's id.
	Session string
	// Records are the session's records, in order (calls and the records
	// that are not calls).
	Records []*evidence.Envelope
	// Config is the manifest and policies the calls ran under.
	Config *executor.RecordedConfig
}

// Read verifies the log of store (against pub, when set) and reads
// session from it; name says which file it is in messages. It reads all
// a replay needs, so the caller may close store before Replay: the file
// of a running serve, which bbolt lets no other process open, is read
// from the consistent copy the daemon makes (its operator socket), and
// that copy can go once it is read.
func Read(store *evidence.Store, name, session string, pub ed25519.PublicKey) (*Recorded, error) {
	recs, cfg, err := recordedSession(store, name, session, pub)
	if err != nil {
		return nil, err
	}
	return &Recorded{Session: session, Records: recs, Config: cfg}, nil
}

// Replay runs the recorded session again, as Run does (opts.PublicKey
// has done its part in Read and is not used).
func (rec *Recorded) Replay(opts Options, out io.Writer) error {
	session, recs, cfg := rec.Session, rec.Records, rec.Config
	dir, err := os.MkdirTemp("", "browsergate-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m, engine, err := restoreConfig(dir, cfg, opts.Secrets)
	if err != nil {
		return err
	}
	log, err := evidence.Open(filepath.Join(dir, "replay.db"), nil)
	if err != nil {
		return err
	}
	defer log.Close()
	broker := approval.NewBroker(nil)
	ex, err := executor.New(executor.Config{Manifests: []*toolclad.Manifest{m}, Policies: engine, Evidence: log,
		Principal: cfg.Principal, Approvals: broker, ApprovalTimeout: replayApprovalTimeout, Logger: slog.New(slog.DiscardHandler),
		Resolver: opts.Resolver})
	if err != nil {
		return err
	}
	defer ex.Close()

	allowed := 0
	for _, r := range recs {
		if ran(r) {
			allowed++
		}
	}
	fmt.Fprintf(out, "replaying session %s: %d record(s), %d that ran, under its recorded manifest %s and %s\n",
		session, len(recs), allowed, filepath.Base(cfg.Manifest.Path), engine.Tally())
	sc := m.Browser.Scope
	where := "in a launched headless browser"
	if m.Browser.Engine == toolclad.EngineHTTP {
		where = "with the browserless engine"
	}
	fmt.Fprintf(out, "%s, scope: allowed_domains %v, allow_external %v, allow_private_cidrs %v\n",
		where, sc.AllowedDomains, sc.AllowExternal, sc.AllowPrivateCIDRs)
	if line := approvedLine(recs); line != "" {
		fmt.Fprintln(out, line)
	}
	users := userTabs(recs)
	if line := userTabsLine(users); line != "" {
		fmt.Fprintln(out, line)
	}
	differ, skipped, replayed := 0, 0, 0
	for _, r := range recs {
		if r.Kind == evidence.KindPageDownload {
			// Not a call: a download a page started by itself, during
			// the call it names (replayed with that call, if it runs).
			fmt.Fprintf(out, "#%-3d %-14s not a call: a download the page started by itself during call #%d; nothing to replay\n",
				r.Seq, "["+r.Kind+"]", r.CallSeq)
			continue
		}
		if r.Kind != "" {
			// Not a call (session_end: what the pages did after the last
			// call): nothing to run again, the permissions they were
			// granted included.
			fmt.Fprintf(out, "#%-3d %-14s not a call: %d request(s) the pages made after the last call, refused by the egress gate%s; nothing to replay\n",
				r.Seq, "["+r.Kind+"]", len(r.Blocked)+r.BlockedDropped, grantedNote(r))
			continue
		}
		if !ran(r) {
			continue
		}
		label := fmt.Sprintf("#%-3d %-14s", r.Seq, r.Command)
		why := onUserTab(r, users)
		if why == "" {
			why = notReplayable(r, m)
		}
		if why != "" {
			skipped++
			fmt.Fprintf(out, "%s NOT REPLAYED: %s\n", label, why)
			continue
		}
		if line := waitLine(r, m.Command(r.Command)); line != "" {
			fmt.Fprintln(out, line)
		}
		got, err := replayStep(ex, log, broker, m, r)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", r.Seq, r.Command, err)
		}
		replayed++
		if diffs := compareStep(r, got); len(diffs) > 0 {
			differ++
			fmt.Fprintf(out, "%s DIFFERS: %s\n", label, evidence.Visible(strings.Join(diffs, "; ")))
			// Which lines of the output changed, under the step: each
			// already made visible, a page's text cannot reach the
			// terminal as anything but text.
			for _, l := range outputLines(r, got) {
				fmt.Fprintf(out, "%*s%s\n", len(label)+1, "", l)
			}
		} else {
			// The page chose its URL and title: shown with nothing hidden
			// (the title quoted, %q, escapes what does not print).
			fmt.Fprintf(out, "%s same     %s %q\n", label, evidence.VisibleLine(str(got.After["url"])), str(got.After["title"]))
		}
	}
	fmt.Fprintf(out, "replayed %d of %d step(s) that ran: %d differ, %d not replayable\n", replayed, allowed, differ, skipped)
	if differ > 0 {
		return fmt.Errorf("%w: %d step(s)", ErrDiffers, differ)
	}
	return nil
}

// ran reports whether a recorded call's action ran: allowed, or refused
// only afterwards, at final_url (its outcome left the scope). A record
// that is not a call (Kind) ran nothing.
func ran(r *evidence.Envelope) bool {
	return r.Kind == "" && (r.Decision.Allowed || r.Decision.Stage == evidence.StageFinalURL)
}

// recordedSession reads a session's records and the configuration they
// ran under, from a log that verifies.
func recordedSession(store *evidence.Store, path, session string, pub ed25519.PublicKey) ([]*evidence.Envelope, *executor.RecordedConfig, error) {
	// Replay trusts what the log says (the calls, the manifest and the
	// policies): only a log that verifies is replayed, against the
	// signing key when the auditor has it.
	var (
		rep *evidence.Report
		err error
	)
	if pub != nil {
		rep, err = store.VerifyWithKey(pub)
	} else {
		rep, err = store.Verify()
	}
	if err != nil {
		return nil, nil, err
	}
	if !rep.OK() {
		first, _ := rep.FirstBad()
		return nil, nil, fmt.Errorf("%w: the log must verify before it is replayed; first bad record: %s", ErrUnverified, first.String())
	}
	recs, err := store.Records(session)
	if errors.Is(err, evidence.ErrUnknownSession) || err == nil && len(recs) == 0 {
		return nil, nil, fmt.Errorf("no session %q in %s (evidence show --evidence %s --summary lists its sessions)", session, path, path)
	}
	if err != nil {
		return nil, nil, err
	}
	// Records that are not calls (session_end, page_download) ran under
	// no configuration and name none.
	calls := slices.DeleteFunc(slices.Clone(recs), func(r *evidence.Envelope) bool { return r.Kind != "" })
	if len(calls) == 0 {
		return nil, nil, fmt.Errorf("session %q in %s has no call to replay", session, path)
	}
	sum := calls[0].ConfigSHA256
	if sum == "" {
		return nil, nil, fmt.Errorf("session %s was recorded without its configuration (config_sha256), so it cannot be replayed", session)
	}
	for _, r := range calls {
		if r.ConfigSHA256 != sum {
			return nil, nil, fmt.Errorf("session %s changed configuration at record %d (the daemon reloaded its policies): replaying it under one configuration would not be faithful", session, r.Seq)
		}
	}
	data, err := store.Config(sum)
	if err != nil {
		return nil, nil, fmt.Errorf("the configuration of session %s: %w", session, err)
	}
	var cfg executor.RecordedConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, nil, fmt.Errorf("the configuration of session %s does not decode: %w", session, err)
	}
	return recs, &cfg, nil
}

// grantedNote is what a session_end record says of the permission
// requests it lists as granted ("" when none): recorded, not refused, and
// nothing replay runs again.
func grantedNote(r *evidence.Envelope) string {
	n := len(r.PermissionsGranted) + r.PermissionsGrantedDropped
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", and %d permission request(s) [browser.permissions] granted them", n)
}
