package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// errTampered marks an evidence log that failed verification.
var errTampered = errors.New("evidence verification failed")

func evidenceCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: evidence needs a subcommand: show or verify", errUsage)
	}
	fs := flag.NewFlagSet("evidence "+args[0], flag.ContinueOnError)
	path := fs.String("evidence", "", "bbolt evidence file")
	session := fs.String("session", "", "only this session (show)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("%w: evidence %s needs --evidence", errUsage, args[0])
	}
	switch args[0] {
	case "show":
		return evidenceShow(*path, *session, stdout)
	case "verify":
		return evidenceVerify(*path, stdout)
	}
	return fmt.Errorf("%w: unknown evidence subcommand %q", errUsage, args[0])
}

func openReadOnly(path string) (*evidence.Store, error) {
	return evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: 5 * time.Second})
}

func evidenceShow(path, only string, stdout io.Writer) error {
	store, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer store.Close()
	all, err := store.Sessions()
	if err != nil {
		return err
	}
	var sessions []evidence.SessionSummary
	records := map[string][]*evidence.Envelope{}
	for _, s := range all {
		if only != "" && s.ID != only {
			continue
		}
		recs, err := store.Records(s.ID)
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
		records[s.ID] = recs
	}
	if only != "" && len(sessions) == 0 {
		return fmt.Errorf("no session %q in %s", only, path)
	}
	return evidence.WriteTimeline(stdout, sessions, records)
}

func evidenceVerify(path string, stdout io.Writer) error {
	store, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer store.Close()
	rep, err := store.Verify()
	if err != nil {
		return err
	}
	if rep.OK() {
		fmt.Fprintf(stdout, "ok: %d session(s), %d record(s), every hash chain intact\n", rep.Sessions, rep.Records)
		return nil
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(stdout, "FAIL:", p.String())
	}
	first, _ := rep.FirstBad()
	return fmt.Errorf("%w: first bad record: %s", errTampered, first.String())
}
