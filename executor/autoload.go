package executor

import (
	"context"
	"fmt"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/gate"
)

// autoload loads the manifest's autoload_state into the session's first
// browser context, once, at its first call, judged as a
// load_storage_state of it is (scope, secrets, the file's trust) but
// without a human: the operator named it. A state that may not be loaded
// refuses this call and every later one of the session (fail closed: a
// session the operator meant signed in does not run signed out). The
// file is recorded with the call it was loaded in (autoloaded).
func (e *Executor) autoload(ctx context.Context, s *session, t *turn) *DenyError {
	name := s.manifest.Browser.Files.AutoloadState
	if name == "" || s.autoloadDone {
		return s.autoloadDeny
	}
	s.autoloadDone = true
	st := s.observeStorageState(name, true)
	f := &facts{StorageState: st}
	if d := gate.StorageStateAllowed(e.question(s, t, f, false)); d != nil {
		s.autoloadDeny = deny(d.Stage, d.Rule, "[browser.files] autoload_state: %s; the session does not run without it", d.Reason)
		return s.autoloadDeny
	}
	tctx, cancel := s.onCurrent(ctx)
	defer cancel()
	if err := s.applyState(tctx, st.Parsed.(*storageState), ""); err != nil {
		s.autoloadDeny = deny(evidence.StageAct, "autoload_state", "[browser.files] autoload_state %s: %v; the session does not run without it", name, err)
		return s.autoloadDeny
	}
	s.autoloaded = &st.File
	s.notice = fmt.Sprintf("loaded state %s (%s) as the session began ([browser.files] autoload_state): %s", name, st.File.Name, st.Parsed.(*storageState).counts())
	return nil
}
