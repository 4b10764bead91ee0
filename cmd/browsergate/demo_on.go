//go:build demo

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	// The daemon's log (its warnings: each approval answered, each
	// origin admitted) goes to a file beside the evidence, named at the
	// end, so that it does not break into the narrative on stdout.
	logPath := demoLogPath(o.evidence)
	serveLog, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("the demo's log for browsergate serve: %w", err)
	}
	defer serveLog.Close()
	d, err := quickstart.Start(quickstart.Config{Binary: self, Version: version, Manifest: o.manifest,
		Policies: o.policies, Evidence: o.evidence, Out: stdout, Stderr: serveLog})
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(stdout, "$ %s\n  (the demo's agent speaks MCP to it over stdio, and its operator answers on its socket; its log goes to %s)\n\n", commandLine(d.ServeArgs()), logPath)
	defer fmt.Fprintf(stderr, "browsergate serve's log (warnings and errors) is in %s\n", logPath)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		return err
	}
	sid, err := newestSession(o.evidence)
	if err != nil {
		return err
	}
	cmds := demoEvidenceCommands(o.evidence, sid, d.SecretArgs())
	err = demoEvidence(o, sid, d, cmds, stdout)
	// Whatever became of them, the commands are printed as they are
	// typed, to run again on the file the demo leaves.
	fmt.Fprintf(stdout, "\nThe evidence is in %s. To read, check and replay it again, or export it for people:\n", o.evidence)
	fmt.Fprintln(stdout, "  (from the repository root; make build makes ./browsergate)")
	for _, c := range cmds {
		fmt.Fprintf(stdout, "  %s\n", builtCommandLine(c))
		if c[1] == "replay" {
			// The site is the demo's own, served only while it runs.
			fmt.Fprintln(stdout, "    (replay visits the site again, and the demo site stopped with the demo: run now, every step differs, and the replay shows how)")
		}
	}
	if err != nil {
		return err
	}
	return d.CanaryErr()
}

// demoEvidence prints the session's timeline, verifies the log and
// replays the session: cmds' first, third and fourth commands, each
// printed before its output.
func demoEvidence(o *demoOptions, sid string, d *quickstart.Demo, cmds [][]string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "\n$ %s\n", commandLine(cmds[0]))
	if err := evidenceShow(&evidenceSource{file: o.evidence}, sid, evidence.TimelineOptions{}, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ %s\n", commandLine(cmds[2]))
	if err := evidenceVerifyWith(&evidenceSource{file: o.evidence}, "", false, nil, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ %s\n", commandLine(cmds[3]))
	return evidenceReplay(&evidenceSource{file: o.evidence}, sid, replay.Options{Secrets: d.ReplaySecrets()}, stdout)
}

// demoLogPath is where the demo's serve writes its log: beside the
// evidence, with the evidence file's name ("demo-evidence.db" ->
// "demo-evidence.log").
func demoLogPath(evidencePath string) string {
	p := strings.TrimSuffix(evidencePath, filepath.Ext(evidencePath)) + ".log"
	if p == evidencePath {
		// Evidence in a .log file of its own is never written over.
		return evidencePath + ".serve.log"
	}
	return p
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
