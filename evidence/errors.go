package evidence

import "errors"

// ErrNewerFormat is returned by Open when the file was written by a newer
// browsergate (its format version is above FormatVersion): reading it with
// rules we do not know could report a valid log as tampered, or worse.
var ErrNewerFormat = errors.New("evidence: file has a newer format version")

// ErrNotEvidence is returned by Open when the file is a bbolt database but
// not an evidence log (no meta bucket, or an unreadable format version), so
// that browsergate never writes envelopes into someone else's data.
var ErrNotEvidence = errors.New("evidence: not an evidence file")

// ErrReadOnly is returned by Append on a store opened with Options.ReadOnly:
// a reader must never extend a chain it is auditing.
var ErrReadOnly = errors.New("evidence: store is read-only")

// ErrInvalidEnvelope is returned (wrapped) by Append for a nil envelope or a
// session id that is empty or longer than MaxSessionIDLen bytes; every
// envelope must belong to exactly one chain.
var ErrInvalidEnvelope = errors.New("evidence: invalid envelope")

// ErrUnknownSession is returned (wrapped) by Records and Export for a
// session the store has no records for.
var ErrUnknownSession = errors.New("evidence: unknown session")

// ErrNoScreenshot is returned (wrapped) by Screenshot when no image is
// stored under the given hash.
var ErrNoScreenshot = errors.New("evidence: screenshot not found")

// ErrNoRecording is returned (wrapped) by Recording when no frame or trace
// is stored under the given hash.
var ErrNoRecording = errors.New("evidence: recording not found")

// ErrCorrupt is returned (wrapped) when stored data cannot be read, or when
// Append finds a chain in a state it never leaves one in (a record already
// under the next sequence number). Append refuses to write rather than
// overwrite evidence; run Verify to see what happened.
var ErrCorrupt = errors.New("evidence: store is corrupt")

// ErrNotCanonical is returned (wrapped) by the canonical encoder for values
// that have no canonical JSON form (NaN, infinities, numbers out of the
// float64 range, types encoding/json cannot marshal).
var ErrNotCanonical = errors.New("evidence: value has no canonical encoding")

// ErrLocked is returned (wrapped) by Open when another process holds the
// file's lock past Options.Timeout: bbolt allows one writer process, and a
// running `browsergate serve` keeps its evidence file open.
var ErrLocked = errors.New("evidence: file is locked by another process (a running browsergate serve?)")

// ErrBadKey is returned (wrapped) for a signing or verification key that is
// not an ed25519 key of the right size, and by the PEM parsers for data
// that holds no such key: a head signed or checked with the wrong kind of
// key proves nothing.
var ErrBadKey = errors.New("evidence: not an ed25519 key")

// ErrNoConfig is returned (wrapped) by Config when no blob is stored under
// the given hash, and by Append for an envelope whose ConfigSHA256 names
// no stored blob: a record must never refer to a configuration that is not
// in the log.
var ErrNoConfig = errors.New("evidence: config blob not found")

// ErrNotIntact is returned (wrapped) by Prune when the log does not verify
// before pruning: removing sessions from a damaged log could remove the
// very records that show the damage, so nothing is removed.
var ErrNotIntact = errors.New("evidence: log does not verify")

// ErrNeedKey is returned (wrapped) by Append and Prune on a signed log when
// the store has no Options.SigningKey: each makes a new log-wide head, and
// an unsigned one would make the log fail VerifyWithKey.
var ErrNeedKey = errors.New("evidence: the log is signed: this needs the signing key")

// ErrNotAcknowledged is returned (wrapped) by Append when the record was
// committed to the file but the SetAcknowledge function refused it: a central
// store did not confirm it in time. The record stays in the file (a
// shipper copies it later); the caller withholds the call's result.
var ErrNotAcknowledged = errors.New("it was not acknowledged by the central store")
