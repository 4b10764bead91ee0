package main

import (
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// errTampered marks an evidence log that failed verification.
var errTampered = errors.New("evidence verification failed")

// evidenceUsage is the synopsis of the evidence subcommands, printed for
// `evidence -h` and with an evidence usage error.
const evidenceUsage = "usage:\n" + evidenceLines

// evidenceLines are the evidence subcommands' lines of the usage text.
const evidenceLines = `  browsergate evidence show   --evidence FILE [--session ID]
  browsergate evidence verify --evidence FILE [--pubkey FILE]
  browsergate evidence export --evidence FILE [--format jsonl|html] [--session ID] [--out FILE] [--pubkey FILE]
  browsergate evidence keygen --out PREFIX
  browsergate evidence prune  --evidence FILE --before DATE [--pubkey FILE]
  browsergate evidence replay --evidence FILE --session ID [--pubkey FILE] [--secret NAME=env:VAR|file:PATH ...]
`

func evidenceCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: evidence needs a subcommand: show, verify, export, keygen, prune or replay\n%s", errUsage, evidenceUsage)
	}
	sub, rest := args[0], args[1:]
	var err error
	switch sub {
	case "show":
		err = evidenceShowCmd(rest, stdout)
	case "verify":
		err = evidenceVerifyCmd(rest, stdout)
	case "export":
		err = evidenceExportCmd(rest, stdout)
	case "keygen":
		err = evidenceKeygenCmd(rest, stdout)
	case "prune":
		err = evidencePruneCmd(rest, stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, evidenceUsage)
		return nil
	default:
		return fmt.Errorf("%w: unknown evidence subcommand %q\n%s", errUsage, sub, evidenceUsage)
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, evidenceUsage)
		return nil
	}
	return err
}

// evidenceFlags is a flag set for `evidence SUB` with the --evidence flag
// every subcommand but keygen has.
func evidenceFlags(sub string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("evidence "+sub, flag.ContinueOnError)
	return fs, fs.String("evidence", "", "bbolt evidence file")
}

// needEvidence is the usage error of a subcommand run without --evidence.
func needEvidence(sub, path string) error {
	if path == "" {
		return fmt.Errorf("%w: evidence %s needs --evidence FILE\n%s", errUsage, sub, evidenceUsage)
	}
	return nil
}

func evidenceShowCmd(args []string, stdout io.Writer) error {
	fs, path := evidenceFlags("show")
	session := fs.String("session", "", "only this session")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needEvidence("show", *path); err != nil {
		return err
	}
	return evidenceShow(*path, *session, stdout)
}

func evidenceVerifyCmd(args []string, stdout io.Writer) error {
	fs, path := evidenceFlags("verify")
	pubPath := fs.String("pubkey", "", "PKIX PEM ed25519 public key: also check every head's signature")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needEvidence("verify", *path); err != nil {
		return err
	}
	return evidenceVerifyWith(*path, *pubPath, stdout)
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

// evidenceVerify verifies the log without a public key.
func evidenceVerify(path string, stdout io.Writer) error {
	return evidenceVerifyWith(path, "", stdout)
}

// evidenceVerifyWith verifies the log and, when pubPath is set, every
// head's signature against that key.
func evidenceVerifyWith(path, pubPath string, stdout io.Writer) error {
	var pub ed25519.PublicKey
	if pubPath != "" {
		var err error
		if pub, err = loadPublicKey(pubPath); err != nil {
			return err
		}
	}
	store, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer store.Close()
	var rep *evidence.Report
	if pub != nil {
		rep, err = store.VerifyWithKey(pub)
	} else {
		rep, err = store.Verify()
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, "FAIL:", p.String())
		}
		first, _ := rep.FirstBad()
		return fmt.Errorf("%w: first bad record: %s", errTampered, first.String())
	}
	fmt.Fprintf(stdout, "ok: %d session(s), %d record(s), every hash chain intact", rep.Sessions, rep.Records)
	if pub != nil {
		fmt.Fprintf(stdout, "; %d head signature(s) verified with key %s", rep.Signed, rep.KeyID)
	}
	fmt.Fprintln(stdout)
	if pub == nil && rep.Signed > 0 {
		fmt.Fprintf(stdout, "note: %d head(s) are signed; pass --pubkey to check the signatures\n", rep.Signed)
	}
	return nil
}

func evidenceExportCmd(args []string, stdout io.Writer) error {
	fs, path := evidenceFlags("export")
	format := fs.String("format", "jsonl", "jsonl (one stored envelope a line) or html (a self-contained report)")
	session := fs.String("session", "", "only this session")
	out := fs.String("out", "", "write to this file instead of standard output")
	pubPath := fs.String("pubkey", "", "html: check head signatures with this PKIX PEM ed25519 public key")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needEvidence("export", *path); err != nil {
		return err
	}
	if *format != "jsonl" && *format != "html" {
		return fmt.Errorf("%w: evidence export: --format must be jsonl or html, not %q", errUsage, *format)
	}
	if *pubPath != "" && *format != "html" {
		return fmt.Errorf("%w: evidence export: --pubkey goes with --format html (a jsonl export carries no heads)", errUsage)
	}
	var pub ed25519.PublicKey
	if *pubPath != "" {
		var err error
		if pub, err = loadPublicKey(*pubPath); err != nil {
			return err
		}
	}
	store, err := openReadOnly(*path)
	if err != nil {
		return err
	}
	defer store.Close()

	var rep *evidence.Report
	write := func(w io.Writer) error {
		if *format == "jsonl" {
			return store.Export(w, *session)
		}
		var err error
		rep, err = store.ExportHTML(w, evidence.HTMLOptions{Session: *session, PublicKey: pub, Source: filepath.Base(*path)})
		return err
	}
	if *out == "" {
		err = write(stdout)
	} else {
		err = writeFileAtomic(*out, write)
	}
	if err != nil {
		return err
	}
	if rep != nil && !rep.OK() {
		first, _ := rep.FirstBad()
		where := "the report"
		if *out != "" {
			where = *out
		}
		return fmt.Errorf("%w: first bad record: %s (%s lists all %d problem(s))", errTampered, first.String(), where, len(rep.Problems))
	}
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %s", *out)
		switch {
		case rep != nil && *session != "":
			fmt.Fprintf(stdout, ": session %s; the whole file (%d session(s), %d record(s)) verifies intact", quoteID(*session), rep.Sessions, rep.Records)
		case rep != nil:
			fmt.Fprintf(stdout, ": %d session(s), %d record(s), verification intact", rep.Sessions, rep.Records)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed into place once write succeeds, so that a reader
// never sees half a report. The file is private (0600): it holds
// evidence, which can hold what pages showed.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func evidenceKeygenCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evidence keygen", flag.ContinueOnError)
	prefix := fs.String("out", "", "write PREFIX.key (private) and PREFIX.pub (public)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *prefix == "" {
		return fmt.Errorf("%w: evidence keygen needs --out PREFIX\n%s", errUsage, evidenceUsage)
	}
	privPEM, pubPEM, err := evidence.GenerateKey(nil)
	if err != nil {
		return err
	}
	pub, err := evidence.ParsePublicKey(pubPEM)
	if err != nil {
		return err
	}
	keyPath, pubPath := *prefix+".key", *prefix+".pub"
	// O_EXCL: never overwrite a key; a lost signing key cannot sign again,
	// and a replaced one no longer matches the public key auditors hold.
	if err := writeNew(keyPath, privPEM, 0o600); err != nil {
		return err
	}
	if err := writeNew(pubPath, pubPEM, 0o644); err != nil {
		os.Remove(keyPath)
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (private: keep it secret; browsergate serve --signing-key %s)\n", keyPath, keyPath)
	fmt.Fprintf(stdout, "wrote %s (public: give it to auditors; browsergate evidence verify --pubkey %s)\n", pubPath, pubPath)
	fmt.Fprintf(stdout, "key id %s\n", evidence.KeyID(pub))
	return nil
}

// writeNew creates path with mode perm and writes data, refusing to
// replace an existing file.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

func evidencePruneCmd(args []string, stdout io.Writer) error {
	fs, path := evidenceFlags("prune")
	beforeText := fs.String("before", "", "remove sessions whose last record is before DATE (2006-01-02, midnight UTC, or RFC 3339)")
	pubPath := fs.String("pubkey", "", "refuse to prune unless every head signature checks out with this public key")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := needEvidence("prune", *path); err != nil {
		return err
	}
	if *beforeText == "" {
		return fmt.Errorf("%w: evidence prune needs --before DATE\n%s", errUsage, evidenceUsage)
	}
	before, err := parseDate(*beforeText)
	if err != nil {
		return fmt.Errorf("%w: evidence prune: --before: %v", errUsage, err)
	}
	var pub ed25519.PublicKey
	if *pubPath != "" {
		if pub, err = loadPublicKey(*pubPath); err != nil {
			return err
		}
	}
	// Open would create a missing file; pruning one is a mistake to report.
	if _, err := os.Stat(*path); err != nil {
		return err
	}
	store, err := evidence.Open(*path, &evidence.Options{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer store.Close()
	var rep evidence.PruneReport
	if pub != nil {
		rep, err = store.PruneWithKey(before, pub)
	} else {
		rep, err = store.Prune(before)
	}
	if err != nil {
		return err
	}
	if len(rep.Sessions) == 0 && len(rep.Screenshots) == 0 && len(rep.Configs) == 0 {
		fmt.Fprintf(stdout, "nothing to prune: no session ends before %s; kept %d session(s)\n", before.Format(time.RFC3339), rep.Kept)
		return nil
	}
	for _, s := range rep.Sessions {
		fmt.Fprintf(stdout, "removed session %s: %d record(s), %s .. %s\n", quoteID(s.ID), s.Records,
			s.First.UTC().Format(time.RFC3339), s.Last.UTC().Format(time.RFC3339))
	}
	for _, h := range rep.Screenshots {
		fmt.Fprintf(stdout, "removed screenshot %s\n", h)
	}
	for _, h := range rep.Configs {
		fmt.Fprintf(stdout, "removed config %s\n", h)
	}
	fmt.Fprintf(stdout, "pruned %d session(s), %d record(s), %d screenshot(s), %d config blob(s) ending before %s; kept %d session(s)\n",
		len(rep.Sessions), rep.Records, len(rep.Screenshots), len(rep.Configs), before.Format(time.RFC3339), rep.Kept)
	return nil
}

// parseDate reads a prune cutoff: a date (midnight UTC of that day) or an
// RFC 3339 time.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date: want 2006-01-02 or RFC 3339 (2006-01-02T15:04:05Z)", s)
}

// quoteID leaves plain session ids as they are and quotes ones with
// spaces or control characters, so they cannot forge output lines.
func quoteID(id string) string {
	if q := fmt.Sprintf("%q", id); q[1:len(q)-1] != id || strings.ContainsAny(id, " ") {
		return q
	}
	return id
}

// loadPublicKey reads a PKIX PEM ed25519 public key.
func loadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, err := evidence.ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	return pub, nil
}

// evidenceOptions are serve's options for the evidence store: with a
// signing key file (PKCS #8 PEM ed25519, from `evidence keygen`), every
// session head is signed.
func evidenceOptions(signingKeyPath string) (*evidence.Options, error) {
	if signingKeyPath == "" {
		return nil, nil
	}
	data, err := os.ReadFile(signingKeyPath)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	key, err := evidence.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", signingKeyPath, err)
	}
	return &evidence.Options{SigningKey: key}, nil
}
