//go:build !demo

package main

import (
	"errors"
	"io"
)

// errNoDemo is the demo command of a binary built without the demo: the
// release binary carries neither the demo site nor its scripted agent.
var errNoDemo = errors.New("built without the demo: go run -tags demo ./cmd/browsergate demo")

func runDemo(*demoOptions, io.Writer, io.Writer) error { return errNoDemo }
