package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/sparetime"
	"github.com/browsergate/browsergate/toolclad"
)

// session is one agent session on one manifest: an MCP session's calls to
// the tools of one manifest. Calls on a session run one at a time (mu is
// held for the whole of a call). Its state is split by concern:
//
//   - tab: the browser context and the tab in it, with its refs and the
//     isolated world (tab.go);
//   - limits: lifetime, idleness and the interaction budget (limits.go);
//   - hold: the approval a call is waiting for (approve.go);
//   - typed: the secrets typed on the current page (gate.TypedSecrets);
//   - egress: the session's share of the request guard — its target
//     guard, its proxy, what the guard refused (guard_proxy.go).
type session struct {
	// objs is the object group of the call that runs (objects.go).
	objs  *callObjects
	id    string // evidence session id
	mcpID string
	// agentID is the agent of an HTTP call ("" on stdio); principal is its
	// Cedar principal (the daemon's --principal on stdio).
	agentID   string
	principal string
	manifest  *toolclad.Manifest
	backend   *backend
	// secrets are the manifest's secrets and the session's secret answers
	// (question.go), for type_text and upload_file.
	secrets atomic.Pointer[gate.Secrets]
	// masker masks the manifest's secrets (and no other manifest's), and
	// the secret answers the operator gave the session (question.go):
	// in full for the record and the log, and for the agent those
	// considered on the page a text comes from (maskscope.go). Atomic: a
	// secret answer replaces it during a call while the request guard's
	// refusals are masked as they happen.
	masker atomic.Pointer[mask.Masker]
	// reach is where the secrets typed in the session may have gone.
	reach secretReach
	// maskText masks page content of the tab's page for the agent as it
	// is read (its own texts of the session as it wrote them:
	// mask.Masker.ForAgent), before it is clipped, and marks it as the
	// page's: the record masks it again in full when the call ends
	// (package pagetext).
	maskText func(string) string
	// secretSpans are where the record's masking (every secret, the
	// agent's own texts too) finds secret material in a text: a reply
	// split into pages is never cut inside one, so each page's record
	// masks it whole.
	secretSpans func(string) [][2]int

	mu    sync.Mutex
	ended bool // the MCP session ended or the executor closed
	// stopping is cancelled as the session begins to end, before mu is
	// taken, with why (a *sessionStop): stopCalls.
	stopping context.Context
	stopNow  context.CancelCauseFunc
	tab      tab
	// worldLock guards tab.worldID and tab.worldNavs: observe reads the
	// page and the element a command acts on side by side, and both may
	// make the isolated world (world.go).
	worldLock ctxLock
	tabIDs    tabIDs      // the short ids list_tabs gives the tabs
	tabs      sessionTabs // the tabs besides the current one
	limits    limits
	// cast is what the session's screencasts kept (recording.go).
	cast  castTally
	hold  hold
	typed gate.TypedSecrets
	// agent is what the agent wrote in the calls of its MCP session, as
	// the pieces of secrets it holds: the replies show them as written
	// (mask.Masker.ForAgent). Shared by the MCP session's sessions.
	agent  *mask.AgentTexts
	egress sessionEgress
	// notice is said once, in the reply to the session's next call (a
	// reload reset the session, an expired session was replaced).
	notice string
	// files is the session's own directory of file copies ("" until
	// one is needed: fileDir), removed when the session ends.
	files string
	// downloads are the session's downloads (downloads.go), from its
	// first tab on.
	downloads *downloads
	// downloadGate and downloadRecord decide a page's download and write
	// its record (downloads_judge.go); groups are the principal's groups
	// as the last call gave them.
	downloadGate   func(ctx context.Context, dl *download, asking func(id string)) downloadAnswer
	downloadRecord func(dl *download)
	groups         []string
	// command is the command of the call running now, so that a refusal
	// deep in it can offer only a call of arguments it takes.
	command *toolclad.Command
	// web is the session's browserless engine (websession.go; nil on the
	// browser's engine, and until its first call).
	web *webSession
	// askHuman puts await_human's question to the operator and waits for
	// the answer (question.go); answers are the secret answers the
	// operator gave the session.
	askHuman func(ctx context.Context, call *toolclad.Call, f *facts) (output, error)
	// guardLost ends the session when its request guard lost its
	// DevTools connection (guardWatch, tab.go); set by the executor.
	guardLost func()
	answers   secretAnswers
	// passwords are what the agent typed into password fields, which the
	// record and the logs mask from then on (typedpasswords.go).
	passwords typedPasswords
	// lastCallEnd is when the session's last call ended (when the session
	// began, until then).
	lastCallEnd time.Time
	// contexts are the session's browser contexts besides the current
	// one (contexts.go).
	contexts sessionContexts
	// autoloadDone: the manifest's autoload_state was tried (autoload);
	// autoloadDeny refuses every call when it could not be loaded;
	// autoloaded is its file, for the record of the call it was loaded
	// in (nil once recorded).
	autoloadDone bool
	autoloadDeny *DenyError
	autoloaded   *evidence.FileRef
	// stateScripts are the local storage of a loaded state waiting for
	// its origin's first document (commands_state.go).
	stateScripts stateScripts
	// lowered are the session's renderers that run on spare processor
	// time while it waits for the agent (spinning.go).
	lowered []*sparetime.Lowered
}

func newSession(m *toolclad.Manifest, mcpID string, b *backend, now time.Time) *session {
	s := &session{
		id:          newSessionID(m.Tool.Name),
		mcpID:       mcpID,
		manifest:    m,
		backend:     b,
		limits:      limits{Limits: gate.NewLimits(now)},
		egress:      sessionEgress{blocked: &blockLog{}, acting: &actingGuard{}, bound: &gate.SecretBinding{}, outside: &gate.OutsideOrigins{}},
		worldLock:   newCtxLock(),
		lastCallEnd: time.Now(),
	}
	s.stopping, s.stopNow = context.WithCancelCause(context.Background())
	return s
}

func newSessionID(tool string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return tool + "-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// view is what the gate reads of the session for a page's download
// (s.mu held).
func (s *session) view() sessionView {
	return sessionView{limits: s.limits.Snapshot(), groups: slices.Clone(s.groups)}
}

// end closes the session for good: no further call runs on it. Saves of
// downloads under way are waited for until deadline (downloads.stop).
func (s *session) end(deadline time.Time) {
	s.ended = true
	s.limits.stopTimers()
	s.downloads.stop(deadline) // while its guards can still cancel them
	s.closeContexts()
	s.web.close()
	if s.files != "" {
		_ = os.RemoveAll(s.files)
		s.files = ""
	}
}

// hold is a session's held approval: the approval a call opened and
// asked the client's user about (a two-round call), guarded by the
// session's mu. A call waiting for a human is stopped without taking mu
// (which the waiting call holds) by the session's stopping context.
type hold struct {
	id string // the approval asked about in an earlier round; any other call withdraws it
}

// fileDir is the session's own directory for file copies (uploads,
// downloads in progress), made on first use and removed with the session.
func (s *session) fileDir() (string, error) {
	if s.files == "" {
		d, err := os.MkdirTemp("", "browsergate-files-")
		if err != nil {
			return "", fmt.Errorf("make the session's file directory: %w", err)
		}
		s.files = d
	}
	return s.files, nil
}

// typedPasswords are the texts the agent typed into password fields in a
// session, literally (not as a declared secret's placeholder). The record
// masks the text argument that carried one; the page then often sends it
// on — a GET form puts it in the next URL, a page echoes it in a title or
// a message — so the evidence and the logs mask it wherever it shows up
// later, as they mask a declared secret. The replies do not: the agent
// wrote the value, and is shown what it wrote.
type typedPasswords struct {
	list []*toolclad.Secret // guarded by the session's answers.mu
}
