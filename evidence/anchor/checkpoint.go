package anchor

import (
	"bytes"
	"context"
	"fmt"

	f_log "github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a checkpoint's body: the log's origin, the tree's size
// and its root hash (RFC 6962 SHA-256), with the signed note it came from.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte
	// Raw is the signed note as published.
	Raw []byte
}

// String names a checkpoint in errors and reports: "checkpoint of size N".
func (c Checkpoint) String() string { return fmt.Sprintf("checkpoint of size %d", c.Size) }

// parseUnverified reads a checkpoint's body without checking its
// signature: for the anchorer's own bookkeeping (which checkpoint is
// newest), never for an audit.
func parseUnverified(raw []byte) (Checkpoint, error) {
	body, _, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		return Checkpoint{}, fmt.Errorf("checkpoint: no signature block")
	}
	var cp f_log.Checkpoint
	if _, err := cp.Unmarshal([]byte(string(body) + "\n")); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return Checkpoint{Origin: cp.Origin, Size: cp.Size, Root: cp.Hash, Raw: raw}, nil
}

// Verifier checks checkpoints, and what a copy of the log holds, against
// the log's public key alone.
type Verifier struct {
	v      note.Verifier
	origin string
}

// NewVerifier returns a Verifier for the log whose public key is vkey, a
// note verifier key ("<origin>+<hash>+<base64 Ed25519 key>", as
// note.GenerateKey makes it). The key's name is the log's origin.
func NewVerifier(vkey string) (*Verifier, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: verifier key: %v", ErrConfig, err)
	}
	return &Verifier{v: v, origin: v.Name()}, nil
}

// Origin is the origin of the log the Verifier checks.
func (v *Verifier) Origin() string { return v.origin }

// Checkpoint opens a signed checkpoint: it must carry a valid signature
// of the log's key and name the log's origin (ErrCheckpointSignature).
func (v *Verifier) Checkpoint(raw []byte) (Checkpoint, error) {
	cp, _, _, err := f_log.ParseCheckpoint(raw, v.origin, v.v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrCheckpointSignature, err)
	}
	return Checkpoint{Origin: cp.Origin, Size: cp.Size, Root: cp.Hash, Raw: raw}, nil
}

// Signed is Checkpoint, parsed: the checkpoint covering every leaf
// appended so far, as this log signed it (its own bookkeeping; an
// auditor opens checkpoints with a Verifier).
func (l *Log) Signed(ctx context.Context) (Checkpoint, error) {
	raw, err := l.Checkpoint(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	return parseUnverified(raw)
}
