package replay

import "errors"

// ErrDiffers means some replayed step came out differently from the record.
var ErrDiffers = errors.New("the replay differs from the record")

// ErrUnverified means the evidence log failed verification, so its calls,
// manifest and policies cannot be trusted to replay.
var ErrUnverified = errors.New("evidence verification failed")
