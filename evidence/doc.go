// Package evidence records every interaction an agent has with the governed
// browser (allowed or denied) as an [Envelope] in a tamper-evident log, and
// verifies, exports and prunes that log later.
//
// Each session is its own hash chain: an envelope carries the hash of the
// one before it, and its own hash is the SHA-256 of its canonical JSON
// encoding ([CanonicalJSON]). The chain lives in a bbolt file ([Open]);
// [Store.Append] commits (and fsyncs) one envelope per bbolt transaction, so
// an envelope is durable before the call that produced it returns. The head
// of every chain (last seq and hash) is kept beside it and updated in the
// same transaction, which is what lets [Store.Verify] notice a truncated or
// extended tail. With [Options.SigningKey] every head is also signed
// (ed25519 over [HeadMessage]), and [Store.VerifyWithKey] then detects a
// tail cut off or extended by someone who rewrote the head but does not
// hold the key.
//
// Screenshots ([Store.Screenshot]), configuration blobs ([Store.PutConfig],
// named by Envelope.ConfigSHA256 so that a call can be replayed under the
// configuration it ran with) and recording blobs ([Store.Recording]: the
// screencast frames and traces Envelope.Recording names, in order) are
// stored once each, under their SHA-256.
//
// Beside the session heads, every Append (and Prune) writes, in the same
// transaction, a log-wide head: one head for the whole file that commits to
// every session's head through a homomorphic set hash (LtHash, constant
// time per append), counts the sessions and the pruned ones, names the
// append that made it and is chained to the one before; signed too with
// Options.SigningKey. Records carry its number (Envelope.LogN).
//
// [Store.Verify] walks every session, never stopping at the first problem,
// and reports altered, removed, inserted or reordered records, heads that do
// not match their chain, screenshots and config blobs whose bytes do not
// match their hash, and whole sessions missing from the log-wide head's
// set. What it cannot detect, even with the key: the whole file put back to
// an earlier state of itself, every signature in it genuine (that needs the
// latest log-wide head kept outside the file), and, in a log written before
// log-wide heads, whole sessions removed before the first one.
//
// For people, [WriteTimeline] prints a log one line a record and
// [Store.ExportHTML] writes a self-contained HTML report; for machines,
// [Store.Export] writes the stored records as JSON Lines.
//
// The byte format is specified in docs/evidence-format.md so that an auditor
// can verify a log with their own tool.
//
// The package imports nothing else of browsergate's.
package evidence
