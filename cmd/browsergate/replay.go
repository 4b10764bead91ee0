package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" || *session == "" {
		return fmt.Errorf("%w: evidence replay needs --evidence and --session", errUsage)
	}
	return evidenceReplay(*path, *session, stdout)
}

// evidenceReplay runs the allowed calls of one recorded session again, in
// a fresh browser, under the manifest and policies the session recorded
// (config_sha256), and reports each step whose outcome differs: the
// decision, the final URL and title, and the output's hash where the
// command's output is deterministic for a deterministic page. Calls a
// human approved are approved again for the replay, as recorded; text that
// was typed into a password field is masked in the log, so such a step
// cannot be replayed and says so (use [secrets] to make it replayable).
func evidenceReplay(path, session string, stdout io.Writer) error {
	recs, cfg, err := recordedSession(path, session)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "browsergate-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m, engine, err := restoreConfig(dir, cfg)
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
		if r.Decision.Allowed {
			allowed++
		}
	}
	fmt.Fprintf(stdout, "replaying session %s: %d record(s), %d allowed, under its recorded manifest %s and %d polic(ies)\n",
		session, len(recs), allowed, filepath.Base(cfg.Manifest.Path), len(engine.Policies()))
	differ, skipped, replayed := 0, 0, 0
	for _, r := range recs {
		if !r.Decision.Allowed {
			continue
		}
		label := fmt.Sprintf("#%-3d %-14s", r.Seq, r.Command)
		if why := notReplayable(r); why != "" {
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
	fmt.Fprintf(stdout, "replayed %d of %d allowed step(s): %d differ, %d not replayable\n", replayed, allowed, differ, skipped)
	if differ > 0 {
		return fmt.Errorf("%w: %d step(s)", errReplayDiffers, differ)
	}
	return nil
}

// recordedSession reads a session's records and the configuration they
// ran under.
func recordedSession(path, session string) ([]*evidence.Envelope, *executor.RecordedConfig, error) {
	store, err := openReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	// Replay trusts what the log says (the calls, the manifest and the
	// policies): only a log that verifies is replayed.
	rep, err := store.Verify()
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

// restoreConfig loads the recorded manifest and writes the recorded
// policies into dir to load them.
func restoreConfig(dir string, cfg *executor.RecordedConfig) (*toolclad.Manifest, *cedar.Engine, error) {
	pdir := filepath.Join(dir, "policies")
	if err := os.Mkdir(pdir, 0o700); err != nil {
		return nil, nil, err
	}
	for name, src := range cfg.Policies {
		if name != filepath.Base(name) {
			return nil, nil, fmt.Errorf("the recorded policy file name %q is not a plain file name", name)
		}
		if err := os.WriteFile(filepath.Join(pdir, name), []byte(src), 0o600); err != nil {
			return nil, nil, err
		}
	}
	// Parsed under its recorded path, so that a secret's file is found
	// where the manifest named it.
	m, err := toolclad.Parse(cfg.Manifest.Path, []byte(cfg.Manifest.Source))
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded manifest does not load here (a secret's variable or file may be missing): %w", err)
	}
	engine, err := cedar.LoadDir(pdir)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded policies do not load: %w", err)
	}
	return m, engine, nil
}

// notReplayable says why a recorded call cannot be run again, or "".
func notReplayable(r *evidence.Envelope) string {
	for k, v := range r.Args {
		if s, ok := v.(string); ok && (strings.HasPrefix(s, "[masked: ") || strings.Contains(s, "[secret ")) {
			return fmt.Sprintf("argument %q was masked in the log (declare the value as a [secrets] entry to make such a step replayable)", k)
		}
	}
	return ""
}

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
	if want.Decision.Allowed != got.Decision.Allowed {
		diffs = append(diffs, fmt.Sprintf("decision: allowed was %v, now %v (%s: %s)", want.Decision.Allowed, got.Decision.Allowed,
			got.Decision.Stage, strings.Join(got.Decision.Reasons, "; ")))
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

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func short(h string) string { return h[:min(12, len(h))] }
