package executor

// SetBeforeApproval has f called, in the external test package, as a call
// of a session is about to be held for a human (with the session's lock
// held): a test ends the session there, while the call is still deciding.
func (e *Executor) SetBeforeApproval(f func(id string)) { e.beforeApproval = f }

// IsOpen says whether the session id is open.
func (e *Executor) IsOpen(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.sessions {
		if s.id == id {
			return true
		}
	}
	return false
}
