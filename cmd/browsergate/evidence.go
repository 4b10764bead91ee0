package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/browsergate/browsergate/approval/operator"
	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/fleet"
)

// errTampered marks an evidence log that failed verification.
var errTampered = errors.New("evidence verification failed")

var evidenceShowCommand = &command{
	name:     "evidence show",
	synopsis: "--evidence FILE|--store URL [--session ID] [--summary] [--refusals]",
	summary: "Print the evidence timeline: every session with the manifest and policies it ran under, and every call in\n" +
		"it with its decision, reasons and pages. --summary prints each session's header and one line counting its calls,\n" +
		"instead of the calls; --refusals prints only the refused calls.",
	setup: func(fs *flag.FlagSet) action {
		src := sourceFlags(fs)
		session := fs.String("session", "", "only this session `ID`")
		summary := fs.Bool("summary", false, "per session, its header and one line counting the calls allowed, refused by stage, and decided by a human, instead of a line per call (with --refusals, the refused calls follow it)")
		refusals := fs.Bool("refusals", false, "only the calls refused, without hashes")
		return func(_ []string, stdout, _ io.Writer) error {
			if err := src.need("show"); err != nil {
				return err
			}
			return evidenceShow(src, *session, evidence.TimelineOptions{Summary: *summary, RefusalsOnly: *refusals}, stdout)
		}
	},
}

var evidenceConfigCommand = &command{
	name:     "evidence config",
	synopsis: "--evidence FILE|--store URL --session ID",
	summary:  "Print the manifest and the policy files a session ran under, as the evidence stored them.",
	setup: func(fs *flag.FlagSet) action {
		src := sourceFlags(fs)
		session := fs.String("session", "", "the session `ID`")
		return func(_ []string, stdout, _ io.Writer) error {
			if err := src.need("config"); err != nil {
				return err
			}
			if *session == "" {
				return fmt.Errorf("%w: evidence config needs --session ID", errUsage)
			}
			return evidenceConfig(src, *session, stdout)
		}
	},
}

// evidenceConfig prints each configuration the session's records name.
func evidenceConfig(src *evidenceSource, session string, stdout io.Writer) error {
	return src.each(session, true, func(store *liveStore, _ string) error { return printConfigs(store, session, stdout) })
}

// printConfigs prints each configuration the session's records name.
func printConfigs(store *liveStore, session string, stdout io.Writer) error {
	recs, err := store.Records(session)
	if err != nil {
		return err
	}
	var seen []string
	for _, e := range recs {
		if e.ConfigSHA256 == "" || slices.Contains(seen, e.ConfigSHA256) {
			continue
		}
		seen = append(seen, e.ConfigSHA256)
		rc, err := recordedConfig(store.Store, e.ConfigSHA256)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "# config %s (from record #%d on), principal %s\n", e.ConfigSHA256, e.Seq, rc.Principal)
		fmt.Fprintf(stdout, "# manifest %s\n%s\n", rc.Manifest.Path, strings.TrimRight(rc.Manifest.Source, "\n"))
		names := make([]string, 0, len(rc.Policies))
		for n := range rc.Policies {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "# policy file %s\n%s\n", n, strings.TrimRight(rc.Policies[n], "\n"))
		}
	}
	if len(seen) == 0 {
		return fmt.Errorf("session %s names no configuration (its records predate them)", session)
	}
	return nil
}

// recordedConfig reads a stored configuration blob.
func recordedConfig(store *evidence.Store, sha string) (*executor.RecordedConfig, error) {
	data, err := store.Config(sha)
	if err != nil {
		return nil, err
	}
	var rc executor.RecordedConfig
	if err := json.Unmarshal(data, &rc); err != nil {
		return nil, fmt.Errorf("config %s: %w", sha, err)
	}
	return &rc, nil
}

var evidenceVerifyCommand = &command{
	name:     "evidence verify",
	synopsis: "--evidence FILE|--store URL [--pubkey FILE] [--central --anchor FILE [--checkpoint FILE] [--anchor-grace 10m]]",
	summary: "Check every hash chain, head, screenshot and config blob of the log (and, with the public key, every\n" +
		"head's signature). Exits 1 naming the first bad record when anything was altered, removed, inserted or reordered.",
	setup: func(fs *flag.FlagSet) action {
		src := sourceFlags(fs)
		pubPath := fs.String("pubkey", "", "PKIX PEM ed25519 public key `FILE`: also check every head's signature")
		a := &anchorCheck{}
		fs.BoolVar(&a.central, "central", false, "with --store: also check the store against the fleet's transparency log (--anchor), so that a deleted or rolled-back session, a rewritten record or a rewritten tile shows")
		fs.StringVar(&a.file, "anchor", "", "anchor `FILE` naming the log's copy (its [copy] bucket, else its dir) and verifier_key_file")
		fs.DurationVar(&a.grace, "anchor-grace", 10*time.Minute, "with --central: a record not anchored yet is counted while it is younger than this, and a problem when older (anchoring stalled, or the record was put in the store behind the anchorer's back)")
		fs.StringVar(&a.checkpoint, "checkpoint", "", "the checkpoint `FILE` kept from the last verify: the log must be consistent with it; a verify that passes writes the current one there")
		return func(_ []string, stdout, _ io.Writer) error {
			if err := src.need("verify"); err != nil {
				return err
			}
			if err := a.check(src); err != nil {
				return err
			}
			// With --central an empty store is the anchors' to judge.
			vouched := map[string]bool{}
			if err := evidenceVerifyWith(src, *pubPath, a.central, vouched, stdout); err != nil || !a.central {
				return err
			}
			return a.verify(src.store, vouched, stdout)
		}
	},
}

var evidenceExportCommand = &command{
	name:     "evidence export",
	synopsis: "--evidence FILE|--store URL [--format jsonl|html] [--session ID] [--out FILE] [--pubkey FILE]",
	summary: "Write the log out: one stored envelope a line (jsonl, for a SIEM), or one self-contained HTML report with\n" +
		"every interaction and the verification status (exit 1 when the log does not verify).",
	setup: evidenceExportFlags,
}

var evidenceKeygenCommand = &command{
	name:     "evidence keygen",
	synopsis: "--out PREFIX [--log ORIGIN]",
	summary:  "Generate an ed25519 key pair: the private key signs evidence heads (serve --signing-key), the public one checks them (--pubkey);\nwith --log, the pair of a fleet's transparency log (anchor files' key_file and verifier_key_file).",
	setup:    evidenceKeygenFlags,
}

var evidencePruneCommand = &command{
	name:     "evidence prune",
	synopsis: "--evidence FILE --before DATE [--signing-key FILE] [--pubkey FILE] [--store URL]",
	summary:  "Remove the sessions that ended before a date, with the screenshots and configs only they used; what remains verifies.",
	setup:    evidencePruneFlags,
}

// evidenceFlag declares the --evidence flag of an evidence subcommand.
func evidenceFlag(fs *flag.FlagSet) *string {
	return fs.String("evidence", "", "bbolt evidence `FILE`")
}

// needEvidence is the usage error of `evidence sub` run without --evidence.
func needEvidence(sub, path string) error {
	if path == "" {
		return fmt.Errorf("%w: evidence %s needs --evidence FILE", errUsage, sub)
	}
	return nil
}

// liveStore is an evidence file opened for reading: the file itself, or,
// while a running serve holds it, a consistent copy the daemon made
// (copy: its path, removed on Close), or a log of the central store
// written into a file of a temporary directory (copy: the directory).
type liveStore struct {
	*evidence.Store
	copy string
	// ahead counts the records of a central store's log left out beyond
	// their session's head.
	ahead int
	// ended are the fleet's records of the central store's log's sessions
	// that ended as their leases expired (ended.go); nil for a file.
	ended []fleet.Ended
	// central: the log is a central store's.
	central bool
}

func (l *liveStore) Close() error {
	err := l.Store.Close()
	if l.copy != "" {
		os.RemoveAll(l.copy)
	}
	return err
}

// openReadOnly opens an evidence file to read. bbolt lets one process at a
// time open a file, so the file of a running serve is read from a copy
// the daemon writes from one read transaction (its operator socket beside
// the file), while its appends go on.
func openReadOnly(path string) (*liveStore, error) {
	store, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: time.Second})
	if err == nil || !errors.Is(err, evidence.ErrLocked) {
		return &liveStore{Store: store}, err
	}
	client, cerr := operator.NewClient(operator.DefaultSocket(path))
	if cerr != nil {
		return nil, fmt.Errorf("%w; and its daemon's copy cannot be asked for: %v", err, cerr)
	}
	tmp, cerr := os.CreateTemp("", "browsergate-evidence-copy-*.db")
	if cerr != nil {
		return nil, cerr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, cerr = client.Evidence(ctx, tmp)
	if err := tmp.Close(); cerr == nil {
		cerr = err
	}
	if cerr == nil {
		store, cerr = evidence.Open(tmp.Name(), &evidence.Options{ReadOnly: true, Timeout: time.Second})
	}
	if cerr != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("%w; its daemon's copy: %v", err, cerr)
	}
	fmt.Fprintf(os.Stderr, "browsergate: %s is held by a running serve: reading the consistent copy it made just now\n", path)
	return &liveStore{Store: store, copy: tmp.Name()}, nil
}

func evidenceShow(src *evidenceSource, only string, opts evidence.TimelineOptions, stdout io.Writer) error {
	return src.each(only, false, func(store *liveStore, name string) error {
		if src.store != "" {
			fmt.Fprintf(stdout, "# %s\n", name)
		}
		return showTimeline(store, name, only, opts, stdout)
	})
}

// showTimeline prints the timeline of one log (of session only, when set).
func showTimeline(store *liveStore, name, only string, opts evidence.TimelineOptions, stdout io.Writer) error {
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
		return fmt.Errorf("no session %q in %s", only, name)
	}
	if store.central {
		opts.Notes = endedNotes(store.ended)
	}
	opts.Config = func(sha string) string {
		rc, err := recordedConfig(store.Store, sha)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		tally, err := cedar.TallySources(rc.Policies)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		return fmt.Sprintf("manifest %s, %s, principal %s (evidence config --session prints them)", rc.Manifest.Path, tally, rc.Principal)
	}
	return evidence.WriteTimelineWith(stdout, sessions, records, opts)
}

// evidenceVerifyWith verifies the log (each log of the central store)
// and, when pubPath is set, every head's signature against that key.
// A store that holds no log is an error, unless emptyOK. vouched (nil: not
// wanted) gets the store's logs whose log-wide head's signature verified
// with the key.
func evidenceVerifyWith(src *evidenceSource, pubPath string, emptyOK bool, vouched map[string]bool, stdout io.Writer) error {
	var pub ed25519.PublicKey
	if pubPath != "" {
		var err error
		if pub, err = loadPublicKey(pubPath); err != nil {
			return err
		}
	}
	if src.store != "" {
		return evidenceVerifyStore(src.store, pub, emptyOK, vouched, stdout)
	}
	store, err := openReadOnly(src.file)
	if err != nil {
		return err
	}
	defer store.Close()
	_, err = verifyOpened(store.Store, pub, stdout)
	return err
}

// verifyOpened verifies an opened log (with pub, its signatures too) and
// prints what it found. signed says whether its log-wide head's signature
// verified with pub.
func verifyOpened(store *evidence.Store, pub ed25519.PublicKey, stdout io.Writer) (signed bool, err error) {
	var rep *evidence.Report
	if pub != nil {
		rep, err = store.VerifyWithKey(pub)
	} else {
		rep, err = store.Verify()
	}
	if err != nil {
		return false, err
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, "FAIL:", p.String())
		}
		first, _ := rep.FirstBad()
		return false, fmt.Errorf("%w: first bad record: %s", errTampered, first.String())
	}
	fmt.Fprintf(stdout, "ok: %d session(s), %d record(s), every hash chain intact", rep.Sessions, rep.Records)
	if pub != nil {
		fmt.Fprintf(stdout, "; %d head signature(s) verified with key %s", rep.Signed, rep.KeyID)
	}
	fmt.Fprintln(stdout)
	if rep.LogHead != nil {
		fmt.Fprintln(stdout, "ok:", rep.Completeness())
	} else {
		fmt.Fprintln(stdout, "note:", rep.Completeness())
	}
	if pub == nil && rep.Signed > 0 {
		fmt.Fprintf(stdout, "note: %d head(s) are signed; pass --pubkey to check the signatures\n", rep.Signed)
	}
	return pub != nil && rep.LogHead != nil && rep.LogHead.Signed, nil
}

func evidenceExportFlags(fs *flag.FlagSet) action {
	o := &exportOptions{}
	o.src = sourceFlags(fs)
	fs.StringVar(&o.format, "format", "jsonl", "output format, `jsonl|html`: jsonl (one stored envelope a line) or html (a self-contained report)")
	fs.StringVar(&o.session, "session", "", "only this session `ID`")
	fs.StringVar(&o.out, "out", "", "write to this `FILE` (atomically, mode 0600) instead of standard output")
	fs.StringVar(&o.pubPath, "pubkey", "", "html: check head signatures with this PKIX PEM ed25519 public key `FILE`")
	return func(_ []string, stdout, _ io.Writer) error { return evidenceExport(o, stdout) }
}

// exportOptions are the flags of `evidence export`.
type exportOptions struct {
	src                           *evidenceSource
	format, session, out, pubPath string
}

// evidenceExport writes the log out as jsonl or an HTML report.
func evidenceExport(o *exportOptions, stdout io.Writer) error {
	if err := o.src.need("export"); err != nil {
		return err
	}
	if o.format != "jsonl" && o.format != "html" {
		return fmt.Errorf("%w: evidence export: --format must be jsonl or html, not %q", errUsage, o.format)
	}
	if o.pubPath != "" && o.format != "html" {
		return fmt.Errorf("%w: evidence export: --pubkey goes with --format html (a jsonl export carries no heads)", errUsage)
	}
	var pub ed25519.PublicKey
	if o.pubPath != "" {
		var err error
		if pub, err = loadPublicKey(o.pubPath); err != nil {
			return err
		}
	}
	// A report verifies one log; jsonl lines of several follow each other
	// on standard output (a file written atomically holds one).
	one := o.format == "html" || o.out != ""
	return o.src.each(o.session, one, func(store *liveStore, name string) error { return exportLog(o, store, name, pub, stdout) })
}

// exportLog writes one log out.
func exportLog(o *exportOptions, store *liveStore, name string, pub ed25519.PublicKey, stdout io.Writer) error {
	var rep *evidence.Report
	var err error
	write := func(w io.Writer) error {
		if o.format == "jsonl" {
			return store.Export(w, o.session)
		}
		var err error
		rep, err = store.ExportHTML(w, evidence.HTMLOptions{Session: o.session, PublicKey: pub, Source: filepath.Base(name)})
		return err
	}
	if o.out == "" {
		err = write(stdout)
	} else {
		err = writeFileAtomic(o.out, write)
	}
	if err != nil {
		return err
	}
	if rep != nil && !rep.OK() {
		first, _ := rep.FirstBad()
		where := "the report"
		if o.out != "" {
			where = o.out
		}
		return fmt.Errorf("%w: first bad record: %s (%s lists all %d problem(s))", errTampered, first.String(), where, len(rep.Problems))
	}
	if o.out != "" {
		fmt.Fprintf(stdout, "wrote %s", o.out)
		switch {
		case rep != nil && o.session != "":
			fmt.Fprintf(stdout, ": session %s; the whole file (%d session(s), %d record(s)) verifies intact", quoteID(o.session), rep.Sessions, rep.Records)
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

func evidenceKeygenFlags(fs *flag.FlagSet) action {
	prefix := fs.String("out", "", "write `PREFIX`.key (private, 0600) and PREFIX.pub (public); never overwrites")
	origin := fs.String("log", "", "instead, a key pair for a fleet's transparency log named `ORIGIN` (example.com/fleet-log): PREFIX.key signs its checkpoints (the anchor file's key_file), PREFIX.vkey checks them (verifier_key_file)")
	return func(_ []string, stdout, _ io.Writer) error {
		if *origin != "" {
			return logKeygen(*prefix, *origin, stdout)
		}
		return evidenceKeygen(*prefix, stdout)
	}
}

// evidenceKeygen writes a new key pair to prefix.key and prefix.pub.
func evidenceKeygen(prefix string, stdout io.Writer) error {
	if prefix == "" {
		return fmt.Errorf("%w: evidence keygen needs --out PREFIX", errUsage)
	}
	privPEM, pubPEM, err := evidence.GenerateKey(nil)
	if err != nil {
		return err
	}
	pub, err := evidence.ParsePublicKey(pubPEM)
	if err != nil {
		return err
	}
	keyPath, pubPath := prefix+".key", prefix+".pub"
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

func evidencePruneFlags(fs *flag.FlagSet) action {
	path := evidenceFlag(fs)
	beforeText := fs.String("before", "", "remove sessions whose last record is before `DATE` (2006-01-02, midnight UTC, or RFC 3339)")
	pubPath := fs.String("pubkey", "", "refuse to prune unless every signature checks out with this public key `FILE`")
	keyPath := fs.String("signing-key", "", "PKCS #8 PEM ed25519 private key `FILE` the log is signed with (serve --signing-key): a signed log is pruned only with it, to sign the log-wide head that records the prune")
	storeURL := fs.String("store", "", "the central store `URL` the file ships to (serve --store): every session to remove must be there whole, else nothing is removed; required for a file a daemon shipped")
	return func(_ []string, stdout, _ io.Writer) error {
		if err := needEvidence("prune", *path); err != nil {
			return err
		}
		if *beforeText == "" {
			return fmt.Errorf("%w: evidence prune needs --before DATE", errUsage)
		}
		return evidencePrune(*path, *beforeText, *pubPath, *keyPath, *storeURL, stdout)
	}
}

// evidencePrune removes the sessions of the log at path that ended before
// beforeText, after checking the signatures with the key at pubPath when
// given, and signs the log-wide head with the key at keyPath when given.
// A file that ships to a central store is pruned only with storeURL, and
// only when the store holds every session to remove whole.
func evidencePrune(path, beforeText, pubPath, keyPath, storeURL string, stdout io.Writer) error {
	before, err := parseDate(beforeText)
	if err != nil {
		return fmt.Errorf("%w: evidence prune: --before: %v", errUsage, err)
	}
	var pub ed25519.PublicKey
	if pubPath != "" {
		if pub, err = loadPublicKey(pubPath); err != nil {
			return err
		}
	}
	opts, err := evidenceOptions(keyPath)
	if err != nil {
		return err
	}
	if opts == nil {
		opts = &evidence.Options{}
	}
	opts.Timeout = 5 * time.Second
	// Open would create a missing file; pruning one is a mistake to report.
	if _, err := os.Stat(path); err != nil {
		return err
	}
	store, err := evidence.Open(path, opts)
	if err != nil {
		return err
	}
	if err := prunedShipped(store, before, storeURL); err != nil {
		store.Close()
		return err
	}
	var rep evidence.PruneReport
	if pub != nil {
		rep, err = store.PruneWithKey(before, pub)
	} else {
		rep, err = store.Prune(before)
	}
	store.Close()
	if errors.Is(err, evidence.ErrNeedKey) {
		return fmt.Errorf("%w; pass --signing-key with the key serve signs with", err)
	}
	if err != nil {
		return err
	}
	if len(rep.Sessions) == 0 && len(rep.Screenshots) == 0 && len(rep.Configs) == 0 && len(rep.Recordings) == 0 {
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
	for _, h := range rep.Recordings {
		fmt.Fprintf(stdout, "removed recording %s\n", h)
	}
	fmt.Fprintf(stdout, "pruned %d session(s), %d record(s), %d screenshot(s), %d config blob(s) ending before %s; kept %d session(s)\n",
		len(rep.Sessions), rep.Records, len(rep.Screenshots), len(rep.Configs), before.Format(time.RFC3339), rep.Kept)
	// The removed records' bytes are still in the file's freed pages:
	// the file is rewritten without them.
	was, now, err := evidence.Compact(path, 5*time.Second)
	if err != nil {
		return fmt.Errorf("the sessions were removed from the log, but their bytes may still be in the file's free pages: %w", err)
	}
	fmt.Fprintf(stdout, "compacted %s: %d -> %d bytes; nothing of the removed sessions is left in it\n", path, was, now)
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
