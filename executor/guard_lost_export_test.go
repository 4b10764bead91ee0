package executor

// LoseGuard drops the DevTools connection of the request guard of each
// session of the MCP session mcpID, as a lost connection would (not as
// the session's own stop closes it).
func (e *Executor) LoseGuard(mcpID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, s := range e.sessions {
		if k.mcp == mcpID && s.egress.guard != nil {
			s.egress.guard.conn.Close()
		}
	}
}
