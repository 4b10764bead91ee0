package executor

import (
	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/policies"
	"github.com/browsergate/browsergate/toolclad"
)

// LoadPolicies loads a policy directory the way the daemon uses it for
// manifests ms: a directory without a .cedarschema is checked against the
// schema built into the binary, and a directory with its own must fit the
// requests the daemon sends for every command of every manifest (its
// resource type and action, every argument, page-state field and counter).
// serve, check, reload, replay and `policy test` all load through it, so
// they accept and refuse the same directories.
func LoadPolicies(dir string, ms []*toolclad.Manifest) (*cedar.Engine, error) {
	opts := &cedar.LoadOptions{DefaultSchema: policies.Schema(), DefaultSchemaName: policies.SchemaName}
	for _, m := range ms {
		opts.Shapes = append(opts.Shapes, cedar.RequestShape{
			Commands:     toolclad.BuiltinCommands(),
			Args:         toolclad.ArgSamples(),
			ResourceType: m.Tool.Cedar.Resource,
			Action:       m.Tool.Cedar.Action,
		})
	}
	return cedar.LoadDirWith(dir, opts)
}
