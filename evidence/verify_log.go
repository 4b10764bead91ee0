package evidence

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// logHead checks the log-wide head against the sessions in tx: the set of
// their heads (and of the pruned sessions' tombstones) must be the one it
// commits to, and, with a key, it must carry the key's signature. A
// session that is gone with its head leaves nothing to name it by, so
// such problems count what is missing; the session the last append wrote
// to is named by id.
func (v *verifier) logHead(tx *bolt.Tx) {
	set, live, records := &setState{}, 0, uint64(0)
	heads := map[string]head{}
	_ = tx.Bucket(bucketHeads).ForEach(func(id, val []byte) error {
		var h head
		if json.Unmarshal(val, &h) != nil {
			return nil // session() names it
		}
		heads[string(id)] = h
		set.add(setLeaf(leafLive, headDigest(string(id), h.Seq, h.Hash)))
		live++
		records += h.Seq
		return nil
	})
	pruned := 0
	if tombs := tx.Bucket(bucketPruned); tombs != nil { // absent in files from before log-wide heads
		_ = tombs.ForEach(func(k, _ []byte) error {
			if !isSHA256Hex(string(k)) {
				v.add(Problem{Reason: fmt.Sprintf("pruned session tombstone %q is not a head digest", k)})
				return nil
			}
			set.add(setLeaf(leafPruned, string(k)))
			pruned++
			return nil
		})
	}
	meta := tx.Bucket(bucketMeta)
	raw := meta.Get(keyLogHead)
	if raw == nil {
		if v.maxLogN > 0 {
			v.add(Problem{Session: v.maxLogSession, Seq: v.maxLogSeq, Reason: fmt.Sprintf(
				"made under log-wide head #%d, but the log has no log-wide head: it was removed", v.maxLogN)})
		}
		if pruned > 0 {
			v.add(Problem{Reason: fmt.Sprintf("%d pruned session(s) are recorded, but the log has no log-wide head: it was removed", pruned)})
		}
		return
	}
	h, err := parseLogHead(raw)
	if err != nil {
		v.add(Problem{Reason: fmt.Sprintf("unreadable log-wide head: %v", err)})
		return
	}
	v.report.LogHead = &LogHeadInfo{N: h.N, Sessions: h.Sessions, Pruned: h.Pruned, Records: h.Records, Legacy: h.Legacy, Signed: h.Sig != ""}
	bad := func(format string, args ...any) {
		v.add(Problem{Reason: fmt.Sprintf("log-wide head #%d: ", h.N) + fmt.Sprintf(format, args...)})
	}
	if v.pub != nil {
		switch {
		case h.Sig == "":
			bad("not signed, but a public key was given: it was written without the signing key")
		case h.Key != v.report.KeyID:
			bad("signed by key %s, not by the given key %s", h.Key, v.report.KeyID)
		case !h.signedBy(v.pub):
			bad("its signature does not verify: it was rewritten without the signing key")
		}
	}
	if stored, ok := parseSetState(meta.Get(keyLogSet)); !ok || stored.digest() != h.Set {
		bad("the set state stored beside it (meta/log_set) does not hash to its set: altered")
	}
	if v.maxLogN > h.N {
		v.add(Problem{Session: v.maxLogSession, Seq: v.maxLogSeq, Reason: fmt.Sprintf(
			"made under log-wide head #%d, beyond the log's log-wide head #%d: the log-wide head was put back to an earlier one", v.maxLogN, h.N)})
	}
	if l := h.Last; l != nil {
		switch got, ok := heads[l.Session]; {
		case !ok:
			v.add(Problem{Session: l.Session, Seq: l.Seq, Reason: fmt.Sprintf(
				"missing: log-wide head #%d was made by appending this record, and the log has no head for its session (the session was removed)", h.N)})
		case got.Seq != l.Seq || got.Hash != l.Hash:
			v.add(Problem{Session: l.Session, Reason: fmt.Sprintf(
				"head (seq %d hash %s) is not the one log-wide head #%d was made with (seq %d hash %s): the session was rolled back or rewritten",
				got.Seq, orNone(got.Hash), h.N, l.Seq, orNone(l.Hash))})
		}
	}
	if set.digest() == h.Set {
		if live != h.Sessions || pruned != h.Pruned || records != h.Records {
			bad("altered: it counts %d session(s), %d pruned, %d record(s), but its set is that of the %d, %d and %d in the log",
				h.Sessions, h.Pruned, h.Records, live, pruned, records)
		}
		return
	}
	switch {
	case live < h.Sessions:
		bad("%d session(s) missing: it covers %d session(s), the log has %d (removed with their heads)", h.Sessions-live, h.Sessions, live)
	case live > h.Sessions:
		bad("%d session(s) it does not cover: it covers %d session(s), the log has %d (added behind the writer's back)", live-h.Sessions, h.Sessions, live)
	}
	switch {
	case pruned < h.Pruned:
		bad("%d pruned session(s) missing: it covers %d, the log records %d (their tombstones were removed)", h.Pruned-pruned, h.Pruned, pruned)
	case pruned > h.Pruned:
		bad("%d pruned session(s) it does not cover: it covers %d, the log records %d (sessions removed and recorded as pruned without the writer)", pruned-h.Pruned, h.Pruned, pruned)
	}
	if live == h.Sessions && pruned == h.Pruned {
		if records != h.Records {
			bad("the sessions' heads name %d record(s), it covers %d: records cut from (or added to) the end of a session whose head was rewritten", records, h.Records)
		} else {
			bad("the sessions' heads are not the ones it covers: a session was rolled back to an earlier head, or replaced")
		}
	}
}

// Completeness says in a sentence what the log-wide head proves about
// whole sessions: which sessions it covers, or that the log has none and
// nothing can be said. It is for a log that verified; on one that did not,
// the problems say more.
func (r *Report) Completeness() string {
	h := r.LogHead
	if h == nil {
		return "no log-wide head: the log was written before browsergate kept one (evidence format revision 9), so it cannot show whether whole sessions were removed"
	}
	s := fmt.Sprintf("log-wide head #%d covers every session: %d in the log, %d pruned", h.N, h.Sessions, h.Pruned)
	if h.Legacy > 0 {
		s += fmt.Sprintf(" (of which %d written before log-wide heads, taken as found when it began)", h.Legacy)
	}
	switch {
	case !h.Signed:
		return s + "; unsigned, so it shows only removals by someone who did not recompute it"
	case r.KeyID != "":
		return s + "; its signature verified"
	}
	return s + "; signed, not checked (pass the public key)"
}
