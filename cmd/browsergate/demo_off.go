//go:build !demo

package main

import (
	"errors"
	"io"
)

// errNoDemo is the demo command of a binary built without the demo: the
// release binary carries neither the demo site nor its scripted agent.
var errNoDemo = errors.New("this binary is built without the demo: run make demo in the repository (it runs go run -tags demo ./cmd/browsergate demo)")

func runDemo(*demoOptions, io.Writer, io.Writer) error { return errNoDemo }
