// Package policies holds the Cedar schema browsergate ships in this
// directory, built into the binary, so that a policy directory without a
// schema of its own is checked against exactly the requests the daemon
// sends (pass Schema to cedar.LoadDirWith as LoadOptions.DefaultSchema).
// The .cedar files here are the default policies; they are read from disk
// with --policies, not embedded.
package policies

import _ "embed" // for the schema

// SchemaName is the file name of the shipped schema, which names the
// built-in schema in messages ("built-in schema (browsergate.cedarschema)").
const SchemaName = "browsergate.cedarschema"

//go:embed browsergate.cedarschema
var schema string

// Schema returns the bytes of browsergate.cedarschema as built into the
// binary (a copy the caller may keep).
func Schema() []byte { return []byte(schema) }
