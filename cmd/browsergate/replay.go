package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor/replay"
)

var evidenceReplayCommand = &command{
	name:     "evidence replay",
	synopsis: "--evidence FILE|--store URL --session ID [--pubkey FILE] [--secret NAME=env:VAR|file:PATH...] [--resolve NAME=IP[,IP...]...]",
	summary: "Run a recorded session again in a fresh launched headless browser (or the browserless engine, for a session of\n" +
		"engine = \"http\"), under the manifest and policies it recorded, and list the steps whose decision, URL, title,\n" +
		"error or output differ, with the lines of the output that changed (exit 1 when any does). Only a log that\n" +
		"verifies is replayed; a running serve's file is read from the copy the daemon makes, as show and verify read it.",
	setup: func(fs *flag.FlagSet) action {
		src := sourceFlags(fs)
		session := fs.String("session", "", "the session `ID` to replay (see evidence show)")
		pubkey := fs.String("pubkey", "", "verify the log's signed heads with this public key `FILE` before trusting it")
		var secrets multiFlag
		fs.Var(&secrets, "secret", "where this machine has the value of a recorded secret, as `NAME=env:VAR|file:PATH` (repeatable); a secret not given is not filled in")
		var resolve multiFlag
		fs.Var(&resolve, "resolve", "answer `NAME=IP[,IP...]` instead of asking DNS for NAME, as serve --resolve does (repeatable)")
		return func(_ []string, stdout, _ io.Writer) error {
			if err := src.need("replay"); err != nil {
				return err
			}
			if *session == "" {
				return fmt.Errorf("%w: evidence replay needs --session", errUsage)
			}
			resolver, err := staticResolver(resolve)
			if err != nil {
				return err
			}
			opts := replay.Options{Secrets: map[string]string{}, Resolver: resolver}
			for _, sv := range secrets {
				name, src, err := replay.ParseSecret(sv)
				if err != nil {
					return fmt.Errorf("%w: --secret %v", errUsage, err)
				}
				opts.Secrets[name] = src
			}
			if *pubkey != "" {
				data, err := os.ReadFile(*pubkey)
				if err != nil {
					return err
				}
				if opts.PublicKey, err = evidence.ParsePublicKey(data); err != nil {
					return err
				}
			}
			return evidenceReplay(src, *session, opts, stdout)
		}
	},
}

// evidenceReplay replays session from src (the log holding it). It is read as
// show and verify read it (openReadOnly: the file itself, or the copy a
// running serve makes of it), and let go before the first step runs, so
// that neither the daemon writing it nor the replay waits for the other.
func evidenceReplay(src *evidenceSource, session string, opts replay.Options, stdout io.Writer) error {
	var rec *replay.Recorded
	err := src.each(session, true, func(store *liveStore, name string) error {
		var err error
		rec, err = replay.Read(store.Store, name, session, opts.PublicKey)
		return err
	})
	if err != nil {
		return err
	}
	return rec.Replay(opts, stdout)
}
