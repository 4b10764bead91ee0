package evidence

// RecordsOnly reports whether e is a session_end record of the egress
// stage that refused nothing: no blocked entry, none counted and left
// out; only permission requests [browser.permissions] granted the pages
// after the last call (spec revision 12). Its stored decision is refused
// at StageEgress, which older readers expect of every session_end record
// of that stage, but nothing was refused: readers that show a verdict
// (evidence show, the HTML report, the console) show it as RECORDED,
// neither allowed nor denied. An operator's end of a session
// (StageLimits) is a refusal of every later call, and stays one.
func (e *Envelope) RecordsOnly() bool {
	return e.Kind == KindSessionEnd && e.Decision.Stage == StageEgress && len(e.Blocked) == 0 && e.BlockedDropped == 0
}
