package executor

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/toolclad"
)

// RecordedConfig is what a session ran under, stored once (content
// addressed) in the evidence log and named by every envelope's
// config_sha256, so that `browsergate evidence replay` can run the session
// again under the same manifest and policies. It holds no secret values:
// a manifest names where a secret is read from, not the secret.
type RecordedConfig struct {
	Principal string `json:"principal"`
	Manifest  struct {
		Path   string `json:"path"`
		Source string `json:"source"`
	} `json:"manifest"`
	// Policies are the policy directory's files (schema and *.cedar) by name.
	Policies map[string]string `json:"policies"`
}

type configKey struct {
	m         *toolclad.Manifest
	p         *cedar.Engine
	principal string
}

// configCache remembers the blob of each (manifest, policies) pair already
// stored, so that it is written once, not with every call.
type configCache struct {
	mu   sync.Mutex
	sums map[configKey]string
}

// configFor stores the configuration of a call (once per manifest and
// policy set) and returns its SHA-256 for the envelope.
func (e *Executor) configFor(m *toolclad.Manifest, p *cedar.Engine, principal string) (string, error) {
	k := configKey{m, p, principal}
	e.configs.mu.Lock()
	defer e.configs.mu.Unlock()
	if sum, ok := e.configs.sums[k]; ok {
		return sum, nil
	}
	var rc RecordedConfig
	rc.Principal = principal
	rc.Manifest.Path, rc.Manifest.Source = m.Path, string(m.Source)
	rc.Policies = map[string]string{}
	for name, src := range p.Sources() {
		rc.Policies[name] = string(src)
	}
	data, err := json.Marshal(rc)
	if err != nil {
		return "", err
	}
	sum, err := e.cfg.Evidence.PutConfig(data)
	if err != nil {
		return "", fmt.Errorf("record the session's configuration: %w", err)
	}
	if e.configs.sums == nil {
		e.configs.sums = map[configKey]string{}
	}
	e.configs.sums[k] = sum
	return sum, nil
}
