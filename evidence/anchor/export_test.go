package anchor

import "time"

// SetRestoreHooks replaces the clock that names the directories a restore
// moves aside, and the rename that moves them, for l's restores.
func SetRestoreHooks(l *Log, now func() time.Time, rename func(from, to string) error) {
	if now != nil {
		l.now = now
	}
	if rename != nil {
		l.rename = rename
	}
}
