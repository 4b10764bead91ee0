// Package evidence records every interaction an agent has with the governed
// browser (allowed or denied) as an [Envelope] in a tamper-evident log, and
// verifies that log later.
//
// Each session is its own hash chain: an envelope carries the hash of the
// one before it, and its own hash is the SHA-256 of its canonical JSON
// encoding ([CanonicalJSON]). The chain lives in a bbolt file ([Open]);
// [Store.Append] commits (and fsyncs) one envelope per bbolt transaction, so
// an envelope is durable before the call that produced it returns. The head
// of every chain (last seq and hash) is kept beside it and updated in the
// same transaction, which is what lets [Store.Verify] notice a truncated or
// extended tail.
//
// [Store.Verify] walks every session, never stopping at the first problem,
// and reports altered, removed, inserted or reordered records, heads that do
// not match their chain, and screenshots whose bytes do not match their
// hash. What it cannot detect: removing a whole session together with its
// head, since nothing else refers to it (signed heads will close that gap).
//
// The byte format is specified in docs/evidence-format.md so that an auditor
// can verify a log with their own tool.
//
// The package imports nothing else of browsergate's.
package evidence
