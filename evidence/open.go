package evidence

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A session is open from its first record until its writer says it ended
// (SessionsEnded): the open bucket (revision 15) names the sessions open
// now, outside the hash chains. A session still open when a writer opens
// the file again was open when the daemon before it died, killed or
// crashed: the daemon records its end (RuleDaemonDied).

// RuleDaemonDied is the rule of the session_end record of a session found
// open when a daemon started on its file: the daemon before it stopped
// without ending it.
const RuleDaemonDied = "the daemon stopped without ending it"

// SessionsEnded records that the sessions ended: they are no longer open.
func (s *Store) SessionsEnded(ids ...string) error {
	if s.opts.ReadOnly || len(ids) == 0 {
		return nil
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		open := tx.Bucket(bucketOpen)
		for _, id := range ids {
			if err := open.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record sessions ended: %w", err)
	}
	return nil
}

// OpenSession is a session still open, with the last record of its chain.
type OpenSession struct {
	ID   string
	Last *Envelope
}

// OpenSessions lists the sessions open (a prune's sessions excepted), each
// with its last record.
func (s *Store) OpenSessions() ([]OpenSession, error) {
	var out []OpenSession
	err := s.db.View(func(tx *bolt.Tx) error {
		open := tx.Bucket(bucketOpen)
		if open == nil { // a file from before revision 15, read-only
			return nil
		}
		return open.ForEach(func(k, _ []byte) error {
			b := tx.Bucket(bucketSessions).Bucket(k)
			if b == nil {
				return nil // pruned
			}
			_, raw := b.Cursor().Last()
			if raw == nil {
				return nil
			}
			e, err := decodeEnvelope(raw)
			if err != nil {
				return fmt.Errorf("%w: session %q: %w", ErrCorrupt, k, err)
			}
			out = append(out, OpenSession{ID: string(k), Last: e})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read the open sessions: %w", err)
	}
	return out, nil
}

// RecordDiedSessions appends, for each session still open, the
// session_end record of a session its daemon died in (RuleDaemonDied,
// stage limits, with the session's principal and tool), and marks it
// ended. A daemon calls it when it opens its file, before its first
// session; it returns the sessions it ended.
func (s *Store) RecordDiedSessions() ([]string, error) {
	open, err := s.OpenSessions()
	if err != nil {
		return nil, err
	}
	var ended []string
	for _, o := range open {
		e := &Envelope{Kind: KindSessionEnd, Session: o.ID, Principal: o.Last.Principal, Tool: o.Last.Tool,
			Decision: Decision{Stage: StageLimits, Rule: RuleDaemonDied, Reasons: []string{fmt.Sprintf(
				"the session was open when its daemon stopped without ending it (killed, or it crashed) after record %d; a daemon that opened this log again found it open and recorded its end: what its browser did after its last record is not known", o.Last.Seq)}}}
		if err := s.Append(e, nil); err != nil {
			return ended, err
		}
		if err := s.SessionsEnded(o.ID); err != nil {
			return ended, err
		}
		ended = append(ended, o.ID)
	}
	return ended, nil
}
