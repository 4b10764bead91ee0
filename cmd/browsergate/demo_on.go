//go:build demo

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/examples/quickstart"
	"github.com/browsergate/browsergate/executor/replay"
)

// runDemo runs the quick start's governed browsing session (package
// quickstart): it serves the demo site and a canary, starts "browsergate
// serve" as a child process, drives it as an agent and an operator would,
// then prints the evidence timeline, verifies the log and replays the
// session.
func runDemo(o *demoOptions, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	d, err := quickstart.Start(quickstart.Config{Binary: self, Version: version, Manifest: o.manifest,
		Policies: o.policies, Evidence: o.evidence, Out: stdout, Stderr: stderr})
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		return err
	}
	sid, err := newestSession(o.evidence)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence show --evidence %s --session %s\n", o.evidence, sid)
	if err := evidenceShow(o.evidence, sid, evidence.TimelineOptions{Summary: true}, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence verify --evidence %s\n", o.evidence)
	if err := evidenceVerifyWith(o.evidence, "", stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ browsergate evidence replay --evidence %s --session %s%s\n", o.evidence, sid, d.SecretFlags())
	if err := evidenceReplay(o.evidence, sid, replay.Options{Secrets: d.ReplaySecrets()}, stdout); err != nil {
		return err
	}
	return d.CanaryErr()
}

// newestSession is the id of the session that started last in the log.
func newestSession(path string) (string, error) {
	store, err := openReadOnly(path)
	if err != nil {
		return "", err
	}
	defer store.Close()
	sessions, err := store.Sessions()
	if err != nil || len(sessions) == 0 {
		return "", errors.Join(err, errors.New("the evidence log has no session"))
	}
	return sessions[len(sessions)-1].ID, nil
}
