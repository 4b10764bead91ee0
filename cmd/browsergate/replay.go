package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/executor/approval"
	"github.com/browsergate/browsergate/toolclad"
)

// errReplayDiffers marks a replay in which some step came out differently.
var errReplayDiffers = errors.New("the replay differs from the record")

// noOutputCompare are commands whose output is not expected to repeat
// byte for byte (timings, image bytes, tab ids).
var noOutputCompare = map[string]bool{"network_timing": true, "screenshot": true, "list_tabs": true}

// replayCmd is `browsergate evidence replay --evidence FILE --session ID`.
func replayCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evidence replay", flag.ContinueOnError)
	path := fs.String("evidence", "", "bbolt evidence file")
	session := fs.String("session", "", "the session to replay (see evidence show)")
	pubkey := fs.String("pubkey", "", "verify the log's signed heads with this public key before trusting it")
	var secrets multiFlag
	fs.Var(&secrets, "secret", "NAME=env:VAR or NAME=file:PATH: where this machine has the value of a recorded secret (repeatable); a secret not given is not filled in")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" || *session == "" {
		return fmt.Errorf("%w: evidence replay needs --evidence and --session", errUsage)
	}
	opts := replayOptions{secrets: map[string]string{}}
	for _, sv := range secrets {
		name, src, ok := strings.Cut(sv, "=")
		kind, where, ok2 := strings.Cut(src, ":")
		if !ok || !ok2 || where == "" || kind != "env" && kind != "file" {
			return fmt.Errorf("%w: --secret %q: want NAME=env:VAR or NAME=file:PATH", errUsage, sv)
		}
		if kind == "file" {
			abs, err := filepath.Abs(where)
			if err != nil {
				return err
			}
			src = "file:" + abs
		}
		opts.secrets[name] = src
	}
	if *pubkey != "" {
		data, err := os.ReadFile(*pubkey)
		if err != nil {
			return err
		}
		if opts.pubkey, err = evidence.ParsePublicKey(data); err != nil {
			return err
		}
	}
	return evidenceReplay(*path, *session, opts, stdout)
}

// replayOptions are what the auditor gives a replay: the key to check the
// log with, and where this machine has the recorded secrets' values.
type replayOptions struct {
	pubkey  ed25519.PublicKey
	secrets map[string]string // name -> "env:VAR" or "file:/abs/path"
}

// evidenceReplay runs the allowed calls of one recorded session again, in
// a fresh browser, under the manifest and policies the session recorded
// (config_sha256), and reports each step whose outcome differs: the
// decision, the final URL and title, and the output's hash where the
// command's output is deterministic for a deterministic page. Calls a
// human approved are approved again for the replay, as recorded; text that
// was typed into a password field is masked in the log, so such a step
// cannot be replayed and says so (use [secrets] to make it replayable).
func evidenceReplay(path, session string, opts replayOptions, stdout io.Writer) error {
	recs, cfg, err := recordedSession(path, session, opts.pubkey)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "browsergate-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m, engine, err := restoreConfig(dir, cfg, opts.secrets)
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
		Principal: cfg.Principal, Approvals: broker, ApprovalTimeout: 30 * time.Second, Logger: slog.New(slog.DiscardHandler)})
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
	fmt.Fprintf(stdout, "replaying session %s: %d record(s), %d that ran, under its recorded manifest %s and %d polic(ies)\n",
		session, len(recs), allowed, filepath.Base(cfg.Manifest.Path), len(engine.Policies()))
	sc := m.Browser.Scope
	fmt.Fprintf(stdout, "in a launched headless browser, scope: allowed_domains %v, allow_external %v, allow_private_cidrs %v\n",
		sc.AllowedDomains, sc.AllowExternal, sc.AllowPrivateCIDRs)
	differ, skipped, replayed := 0, 0, 0
	for _, r := range recs {
		if !ran(r) {
			continue
		}
		label := fmt.Sprintf("#%-3d %-14s", r.Seq, r.Command)
		if why := notReplayable(r, m); why != "" {
			skipped++
			fmt.Fprintf(stdout, "%s NOT REPLAYED: %s\n", label, why)
			continue
		}
		got, err := replayStep(ex, log, broker, m, r)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", r.Seq, r.Command, err)
		}
		replayed++
		if diffs := compareStep(r, got); len(diffs) > 0 {
			differ++
			fmt.Fprintf(stdout, "%s DIFFERS: %s\n", label, strings.Join(diffs, "; "))
		} else {
			fmt.Fprintf(stdout, "%s same     %s %q\n", label, str(got.After["url"]), str(got.After["title"]))
		}
	}
	fmt.Fprintf(stdout, "replayed %d of %d step(s) that ran: %d differ, %d not replayable\n", replayed, allowed, differ, skipped)
	if differ > 0 {
		return fmt.Errorf("%w: %d step(s)", errReplayDiffers, differ)
	}
	return nil
}

// ran reports whether a recorded call's action ran: allowed, or refused
// only afterwards, at final_url (its outcome left the scope).
func ran(r *evidence.Envelope) bool {
	return r.Decision.Allowed || r.Decision.Stage == "final_url"
}

// recordedSession reads a session's records and the configuration they
// ran under.
func recordedSession(path, session string, pub ed25519.PublicKey) ([]*evidence.Envelope, *executor.RecordedConfig, error) {
	store, err := openReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	// Replay trusts what the log says (the calls, the manifest and the
	// policies): only a log that verifies is replayed, against the
	// signing key when the auditor has it.
	var rep *evidence.Report
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
		return nil, nil, fmt.Errorf("%w: the log must verify before it is replayed; first bad record: %s", errTampered, first.String())
	}
	recs, err := store.Records(session)
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("no session %q in %s", session, path)
	}
	sum := recs[0].ConfigSHA256
	if sum == "" {
		return nil, nil, fmt.Errorf("session %s was recorded without its configuration (config_sha256), so it cannot be replayed", session)
	}
	for _, r := range recs {
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

// restoreConfig loads the recorded manifest, made safe to run on the
// auditor's machine, and writes the recorded policies into dir to load
// them. The log says what ran; it does not get to choose what the replay
// starts or reads here: the browser is always a launched, headless
// Chromium (never a recorded executable or live endpoint), and a secret is
// read only from where the auditor said (--secret), never from the
// recorded env or file.
func restoreConfig(dir string, cfg *executor.RecordedConfig, secrets map[string]string) (*toolclad.Manifest, *cedar.Engine, error) {
	pdir := filepath.Join(dir, "policies")
	if err := os.Mkdir(pdir, 0o700); err != nil {
		return nil, nil, err
	}
	for name, src := range cfg.Policies {
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
			return nil, nil, fmt.Errorf("the recorded policy file name %q is not a plain file name", name)
		}
		if err := os.WriteFile(filepath.Join(pdir, name), []byte(src), 0o600); err != nil {
			return nil, nil, err
		}
	}
	source, err := safeManifest(cfg.Manifest.Source, secrets)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded manifest: %w", err)
	}
	m, err := toolclad.Parse(filepath.Base(cfg.Manifest.Path), source)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded manifest does not load here (is a --secret's variable or file missing?): %w", err)
	}
	engine, err := cedar.LoadDir(pdir)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded policies do not load: %w", err)
	}
	return m, engine, nil
}

// safeManifest rewrites a recorded manifest for replay: connect = launch,
// headless, the default executable; each secret read from the auditor's
// --secret mapping, and dropped when there is none.
func safeManifest(src string, secrets map[string]string) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	browser, _ := doc["browser"].(map[string]any)
	if browser == nil {
		browser = map[string]any{}
		doc["browser"] = browser
	}
	browser["connect"], browser["headless"] = "launch", true
	delete(browser, "executable_path")
	delete(browser, "live_endpoint")
	if recorded, ok := doc["secrets"].(map[string]any); ok {
		for name, v := range recorded {
			t, _ := v.(map[string]any)
			where, given := secrets[name]
			if t == nil || !given {
				delete(recorded, name)
				continue
			}
			delete(t, "env")
			delete(t, "file")
			kind, loc, _ := strings.Cut(where, ":")
			t[kind] = loc
		}
		if len(recorded) == 0 {
			delete(doc, "secrets")
		}
	}
	return toml.Marshal(doc)
}

// notReplayable says why a recorded call cannot be run again, or "".
func notReplayable(r *evidence.Envelope, m *toolclad.Manifest) string {
	for k, v := range r.Args {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if strings.HasPrefix(s, "[masked: ") || strings.Contains(s, "[secret ") {
			return fmt.Sprintf("argument %q was masked in the log (declare the value as a [secrets] entry to make such a step replayable)", k)
		}
		for _, name := range placeholderRE.FindAllStringSubmatch(s, -1) {
			if !slices.ContainsFunc(m.Secrets, func(sec *toolclad.Secret) bool { return sec.Name == name[1] }) {
				return fmt.Sprintf("argument %q types secret %s, and no --secret %s=env:VAR or =file:PATH says where this machine has it", k, name[1], name[1])
			}
		}
	}
	return ""
}

// placeholderRE finds secret placeholders (<NAME>) in a recorded argument.
var placeholderRE = regexp.MustCompile(`<([A-Z][A-Z0-9_]{0,63})>`)

// replayStep runs one recorded call and returns the replay's record of it.
func replayStep(ex *executor.Executor, log *evidence.Store, broker *approval.Broker, m *toolclad.Manifest, r *evidence.Envelope) (*evidence.Envelope, error) {
	cmd := m.Command(r.Command)
	if cmd == nil {
		return nil, fmt.Errorf("the recorded manifest does not declare %s", r.Command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if a := r.Decision.Approval; a != nil && a.Approved {
		go approveAsRecorded(ctx, broker, a)
	}
	args, argErr := cmd.Validate(r.Args)
	ex.Run(ctx, &toolclad.Call{Manifest: m, Command: cmd, Tool: toolclad.ToolName(m, cmd, "."), SessionID: "replay",
		RawArgs: r.Args, Args: args, ArgErr: argErr, Progress: func(string) {}})
	sessions, err := log.Sessions()
	if err != nil || len(sessions) != 1 {
		return nil, fmt.Errorf("the replay's own log: %v (%d sessions)", err, len(sessions))
	}
	recs, err := log.Records(sessions[0].ID)
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("the replay's own log: %v", err)
	}
	return recs[len(recs)-1], nil
}

// approveAsRecorded answers the replayed call's approval as the record
// says a human did.
func approveAsRecorded(ctx context.Context, broker *approval.Broker, a *evidence.Approval) {
	for ctx.Err() == nil {
		for _, p := range broker.List() {
			broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: "replay", By: fmt.Sprintf("recorded approval %s by %s via %s", a.ID, a.By, a.Channel)})
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compareStep lists how the replayed call differs from the recorded one.
func compareStep(want, got *evidence.Envelope) []string {
	var diffs []string
	if want.Decision.Allowed != got.Decision.Allowed || want.Decision.Stage != got.Decision.Stage {
		diffs = append(diffs, fmt.Sprintf("decision: %s at %s, now %s at %s (%s)", verdict(want), want.Decision.Stage,
			verdict(got), got.Decision.Stage, strings.Join(got.Decision.Reasons, "; ")))
	}
	if (want.Error == "") != (got.Error == "") {
		diffs = append(diffs, fmt.Sprintf("error: %q, now %q", want.Error, got.Error))
	}
	for _, field := range []string{"url", "title"} {
		if w, g := str(want.After[field]), str(got.After[field]); w != g {
			diffs = append(diffs, fmt.Sprintf("%s: %q, now %q", field, w, g))
		}
	}
	if !noOutputCompare[want.Command] && want.OutputSHA256 != got.OutputSHA256 {
		diffs = append(diffs, "output differs (sha256 "+short(want.OutputSHA256)+" -> "+short(got.OutputSHA256)+")")
	}
	return diffs
}

func verdict(e *evidence.Envelope) string {
	if e.Decision.Allowed {
		return "allowed"
	}
	return "refused"
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func short(h string) string { return h[:min(12, len(h))] }
