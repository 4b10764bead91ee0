package executor

// BrowserPIDs are the process ids of the browsers the executor launched
// and that run.
func (e *Executor) BrowserPIDs() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []int
	for _, b := range e.backends {
		if pid := b.browserPID(); pid != 0 {
			out = append(out, pid)
		}
	}
	return out
}
