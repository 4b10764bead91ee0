package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr"
	"golang.org/x/mod/sumdb/note"
	"k8s.io/klog/v2"

	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/anchor"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/toolclad"
)

// openAnchorer opens the fleet's transparency log an anchor file names,
// with its signing key and its copy, for the anchorer of serve --anchor.
func openAnchorer(ctx context.Context, path string, c *central.Store, logger *slog.Logger) (*central.Anchorer, error) {
	a, err := toolclad.LoadAnchor(path)
	if err != nil {
		return nil, err
	}
	if a.Dir == "" || a.KeyFile == "" {
		return nil, fmt.Errorf("--anchor %s: serve needs dir (the log's directory) and key_file (the key that signs its checkpoints)", path)
	}
	key, err := readSecretFile(a.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--anchor %s: key_file: %w", path, err)
	}
	signer, err := note.NewSigner(key)
	if err != nil {
		return nil, fmt.Errorf("--anchor %s: key_file %s is not a note signing key (evidence keygen --log ORIGIN makes one): %v", path, a.KeyFile, err)
	}
	// Tessera logs through klog: into the daemon's log, as its own lines.
	klog.SetLogger(logr.FromSlogHandler(logger.Handler()))
	vkey, err := verifierKeyOf(key)
	if err != nil {
		return nil, fmt.Errorf("--anchor %s: key_file %s: %w", path, a.KeyFile, err)
	}
	if a.VerifierKeyFile != "" {
		given, err := os.ReadFile(a.VerifierKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--anchor %s: verifier_key_file: %w", path, err)
		}
		if strings.TrimSpace(string(given)) != vkey {
			return nil, fmt.Errorf("--anchor %s: verifier_key_file %s is not the verifier key of key_file %s", path, a.VerifierKeyFile, a.KeyFile)
		}
	}
	v, err := anchor.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("--anchor %s: key_file %s: %w", path, a.KeyFile, err)
	}
	l, err := anchor.Open(ctx, anchor.Config{Dir: a.Dir, Signer: signer, CheckpointInterval: a.CheckpointInterval, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("--anchor %s: %w", path, err)
	}
	// With a Mirror, the anchorer restores the log from its bucket when
	// this replica's directory is behind it on taking over.
	an := &central.Anchorer{Store: c, Log: l, Logger: logger, Verifier: v, Every: a.AnchorEvery, RoundWait: a.RoundTimeout}
	if a.Copy != nil {
		client, err := s3Client(a.Copy)
		if err != nil {
			l.Close(ctx)
			return nil, fmt.Errorf("--anchor %s: [copy]: %w", path, err)
		}
		if err := anchor.EnsureBucket(ctx, client, a.Copy.Bucket); err != nil {
			l.Close(ctx)
			return nil, fmt.Errorf("--anchor %s: [copy]: %w", path, err)
		}
		if an.Mirror, err = anchor.NewMirror(anchor.MirrorConfig{Client: client, Bucket: a.Copy.Bucket, Prefix: a.Copy.Prefix, Retention: a.Copy.Retention}); err != nil {
			l.Close(ctx)
			return nil, fmt.Errorf("--anchor %s: [copy]: %w", path, err)
		}
	}
	return an, nil
}

// s3Client reaches an anchor file's bucket with the credentials of the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
func s3Client(c *toolclad.AnchorCopy) (*s3.Client, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return nil, fmt.Errorf("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set: the credentials of bucket %s", c.Bucket)
	}
	return anchor.NewS3Client(anchor.S3Config{Endpoint: c.Endpoint, Region: c.Region, AccessKey: id, SecretKey: secret, VirtualHosted: !c.PathStyle}), nil
}

// readSecretFile reads a key file that must be readable by its owner
// alone.
func readSecretFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// anchorCheck is evidence verify's --central, --anchor and --checkpoint.
type anchorCheck struct {
	central          bool
	file, checkpoint string
	grace            time.Duration
}

func (a *anchorCheck) check(src *evidenceSource) error {
	switch {
	case !a.central && (a.file != "" || a.checkpoint != ""):
		return fmt.Errorf("%w: --anchor and --checkpoint go with --central", errUsage)
	case a.central && src.store == "":
		return fmt.Errorf("%w: --central checks the central store: give --store URL", errUsage)
	case a.central && a.file == "":
		return fmt.Errorf("%w: --central needs --anchor FILE: where the transparency log's copy is, and its verifier key", errUsage)
	}
	return nil
}

// verify checks the central store against the transparency log's copy,
// after every log of it verified by the file's rules.
func (a *anchorCheck) verify(url string, vouched map[string]bool, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	af, err := toolclad.LoadAnchor(a.file)
	if err != nil {
		return err
	}
	if af.VerifierKeyFile == "" {
		return fmt.Errorf("--anchor %s: an auditor needs verifier_key_file (the log's verifier key)", a.file)
	}
	vkey, err := os.ReadFile(af.VerifierKeyFile)
	if err != nil {
		return fmt.Errorf("--anchor %s: verifier_key_file: %w", a.file, err)
	}
	v, err := anchor.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		return fmt.Errorf("--anchor %s: verifier_key_file %s: %w", a.file, af.VerifierKeyFile, err)
	}
	var src anchor.Source = anchor.DirSource(af.Dir)
	var kept [][]byte
	where := af.Dir
	if af.Copy != nil {
		client, err := s3Client(af.Copy)
		if err != nil {
			return fmt.Errorf("--anchor %s: [copy]: %w", a.file, err)
		}
		bucket := anchor.BucketSource{Client: client, Bucket: af.Copy.Bucket, Prefix: af.Copy.Prefix}
		// Every version of the checkpoint the bucket keeps, locked: the
		// current one must answer for each.
		if kept, err = bucket.Checkpoints(ctx); err != nil {
			return fmt.Errorf("--anchor %s: the checkpoints of bucket %s: %w", a.file, af.Copy.Bucket, err)
		}
		src, where = bucket, "s3://"+af.Copy.Bucket+"/"+af.Copy.Prefix
	}
	if a.checkpoint != "" {
		raw, err := os.ReadFile(a.checkpoint)
		switch {
		case err == nil:
			kept = append(kept, raw)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("--checkpoint: %w", err)
		}
	}
	c, err := openCentral(url)
	if err != nil {
		return err
	}
	defer c.Close()
	rep, err := c.VerifyAnchors(ctx, v, src, kept, a.grace, func(log string) bool { return vouched[log] })
	if err != nil {
		return err
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, "FAIL:", evidence.Visible(p))
		}
		return fmt.Errorf("%w: the central store and its transparency log (%s) disagree: %s", errTampered, where, evidence.Visible(rep.Problems[0]))
	}
	fmt.Fprintf(stdout, "ok: the transparency log's %s (%s, origin %s) verifies; %d record(s) in the store: %d anchored, %d not yet anchored; %d pruned session(s)\n",
		rep.Checkpoint, where, v.Origin(), rep.Records, rep.Anchored, rep.Unanchored, rep.Pruned)
	if a.checkpoint != "" {
		if err := writeFileAtomic(a.checkpoint, func(w io.Writer) error { _, err := w.Write(rep.Checkpoint.Raw); return err }); err != nil {
			return fmt.Errorf("--checkpoint: %w", err)
		}
		fmt.Fprintf(stdout, "kept the %s in %s for the next verify\n", rep.Checkpoint, a.checkpoint)
	}
	return nil
}

// logKeygen writes a new note key pair of the transparency log origin to
// prefix.key and prefix.vkey.
func logKeygen(prefix, origin string, stdout io.Writer) error {
	if prefix == "" {
		return fmt.Errorf("%w: evidence keygen needs --out PREFIX", errUsage)
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		return fmt.Errorf("%w: --log %q: %v", errUsage, origin, err)
	}
	keyPath, vkeyPath := prefix+".key", prefix+".vkey"
	if err := writeNew(keyPath, []byte(skey+"\n"), 0o600); err != nil {
		return err
	}
	if err := writeNew(vkeyPath, []byte(vkey+"\n"), 0o644); err != nil {
		os.Remove(keyPath)
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (private: the anchorer's key_file; keep it secret)\n", keyPath)
	fmt.Fprintf(stdout, "wrote %s (public: auditors' verifier_key_file)\n", vkeyPath)
	return nil
}

// verifierKeyOf is the verifier key of a note signing key
// (PRIVATE+KEY+<name>+<hash>+<base64 of 0x01 and the Ed25519 seed>).
func verifierKeyOf(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("not a note signing key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("not an Ed25519 note signing key")
	}
	return note.NewEd25519VerifierKey(parts[2], ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey))
}
