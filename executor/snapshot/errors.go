package snapshot

import "errors"

// ErrNoDocument: the capture holds no document to render (its layout
// was not read).
var ErrNoDocument = errors.New("the capture holds no document")

// ErrRootNotFound: the element Options.Root names is not in the
// capture's top document.
var ErrRootNotFound = errors.New("the root element is not in the capture's top document")
