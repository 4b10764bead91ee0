package replay

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// noOutputCompare are commands whose output is not expected to repeat
// byte for byte (timings, image bytes, tab ids, a PDF's hash: Chromium
// writes the time it printed into the file).
var noOutputCompare = map[string]bool{"network_timing": true, "screenshot": true, "list_tabs": true, "save_pdf": true}

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
	ctx, cancel := context.WithTimeout(context.Background(), replayStepTimeout)
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
			broker.Decide(p.ID, approval.Outcome{Approved: true, Channel: approval.ChannelReplay, By: fmt.Sprintf("recorded approval %s by %s via %s", a.ID, a.By, a.Channel)})
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
	if outputDiffers(want, got) {
		hashes := "sha256 " + short(want.OutputSHA256) + " -> " + short(got.OutputSHA256)
		_, removed, added := textDiff(want.Output, got.Output)
		switch {
		case removed+added > 0:
			diffs = append(diffs, fmt.Sprintf("output: %d line(s) removed, %d added (%s)", removed, added, hashes))
		case want.OutputTruncated || got.OutputTruncated:
			diffs = append(diffs, "output differs past the part the log keeps of it ("+hashes+")")
		default:
			diffs = append(diffs, "output differs ("+hashes+")")
		}
	}
	return diffs
}

// outputDiffers reports whether a step's output came out differently,
// for a command whose output is expected to repeat.
func outputDiffers(want, got *evidence.Envelope) bool {
	return !noOutputCompare[want.Command] && !sameOutput(want, got)
}

// outputLines is the readable difference between the output a step
// recorded and the one its replay gave (see textDiff), or nothing when
// the output is not compared or did not change.
func outputLines(want, got *evidence.Envelope) []string {
	if !outputDiffers(want, got) {
		return nil
	}
	lines, _, _ := textDiff(want.Output, got.Output)
	return lines
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
