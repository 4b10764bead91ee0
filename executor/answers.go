package executor

import (
	"sync"

	"github.com/browsergate/browsergate/toolclad"
)

// secretAnswers are the secret answers the operator gave a session.
type secretAnswers struct {
	mu   sync.Mutex
	list []*toolclad.Secret
}
