// Package anchor is the fleet's transparency log: a Tessera log (the
// tlog-tiles layout, https://c2sp.org/tlog-tiles) on a local directory that
// one anchorer appends leaves to, with checkpoints signed as notes
// (https://c2sp.org/tlog-checkpoint, Ed25519); a copy of its checkpoints,
// tiles and entry bundles in an S3 bucket whose every object is held by
// Object Lock in compliance mode; and the checks an auditor runs from such
// a copy alone, trusting nothing but the log's public key. The same copy
// rebuilds the log's directory on another machine (Log.Restore, with
// Tessera's migration), checked the same way before anything is appended.
//
// The package is opaque to what a leaf means: a leaf is bytes (at most
// 65535 of them, as a tlog-tiles entry). The evidence store feeds it one
// leaf per record and matches the leaves an audit hands back against its
// records.
//
// Why a log and not just signed heads: a signed head proves what a log
// held when it was signed, but a database administrator can delete a whole
// session, or roll one back to an earlier head, and what is left still
// verifies. Once a record's leaf is under a checkpoint whose copy is
// locked, the record's absence, a different record, a rewritten tile or a
// shorter log shows: the tree recomputed from the entry bundles no longer
// gives the signed root, or the current checkpoint is not consistent with
// one the auditor kept.
package anchor
