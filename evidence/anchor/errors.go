package anchor

import "errors"

// Errors an audit, a proof check or the log itself returns, wrapped with
// where it went wrong (which checkpoint size, tile, entry bundle or leaf
// index); match them with errors.Is.
var (
	// ErrConfig is a Config or MirrorConfig that cannot work: no directory,
	// no signer, an origin that is not the signer's name, no retention.
	ErrConfig = errors.New("anchor: invalid configuration")

	// ErrOtherLog is a log directory, or a bucket, that holds another
	// log's checkpoint (another origin): the anchorer refuses to append to
	// or mirror over it.
	ErrOtherLog = errors.New("anchor: the checkpoint there names another log")

	// ErrCheckpointSignature is a checkpoint that does not verify with the
	// log's public key: forged, signed with another key, for another
	// origin, or not a checkpoint at all.
	ErrCheckpointSignature = errors.New("anchor: checkpoint signature does not verify")

	// ErrBundleMismatch is a set of entry bundles that does not recompute
	// the signed root: a leaf rewritten, removed or added after the
	// checkpoint was signed, or a bundle missing or malformed.
	ErrBundleMismatch = errors.New("anchor: entry bundles do not recompute the checkpoint's root")

	// ErrTileMismatch is a hash tile that differs from the tree recomputed
	// from the entry bundles (which do give the signed root): the tile was
	// rewritten, or is missing or malformed.
	ErrTileMismatch = errors.New("anchor: tile differs from the recomputed tree")

	// ErrRolledBack is a log whose current checkpoint is smaller than one
	// the auditor kept: it was shortened or rolled back since.
	ErrRolledBack = errors.New("anchor: log is smaller than a checkpoint the auditor kept")

	// ErrInconsistent is a current checkpoint that does not extend one the
	// auditor kept: the consistency proof between them, computed from the
	// tiles, does not verify (the log was rewritten since).
	ErrInconsistent = errors.New("anchor: checkpoint is not consistent with a kept checkpoint")

	// ErrInclusion is a leaf whose inclusion proof, computed from the
	// tiles, does not lead to the checkpoint's root: the leaf is not at that
	// index under that checkpoint.
	ErrInclusion = errors.New("anchor: leaf is not included under the checkpoint")

	// ErrMirrorAhead is a bucket whose checkpoint is larger than, or not
	// the same tree as, the log it would mirror: the log was rolled back or
	// replaced, and mirroring it would hide that.
	ErrMirrorAhead = errors.New("anchor: the bucket's checkpoint is ahead of the log")

	// ErrBucketMoved refuses to put a checkpoint over one another writer
	// put since the mirror read the bucket.
	ErrBucketMoved = errors.New("anchor: the bucket's checkpoint changed under the mirror")

	// ErrBucketNotLocked is a bucket without Object Lock enabled (or
	// without versioning): objects written there could be deleted.
	ErrBucketNotLocked = errors.New("anchor: bucket does not have Object Lock enabled")

	// ErrClosed is an Append or Checkpoint on a closed Log.
	ErrClosed = errors.New("anchor: log is closed")

	// ErrNotOpen is an Append or Checkpoint while Restore replaces the
	// log's directory, or after Tessera could not be opened on it again.
	ErrNotOpen = errors.New("anchor: log is not open on its directory")

	// ErrDiverged is a log directory whose leaves are not the first leaves
	// of the copy it would be restored from: another history, which a
	// restore does not replace.
	ErrDiverged = errors.New("anchor: the log's directory diverges from its copy")
)
