package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/browsergate/browsergate/approval"
	approvalcentral "github.com/browsergate/browsergate/approval/central"
	"github.com/browsergate/browsergate/daemon"
	"github.com/browsergate/browsergate/events"
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/fleet"
)

// How long serve waits for the central store at start, and for the last
// records to ship when it stops.
const (
	centralConnectWait = 30 * time.Second
	centralFlushWait   = 30 * time.Second
)

// startCentral connects to the central store (--store) and ships the
// evidence file to it until the returned stop is called (after the
// executor closed, so that the records of the sessions it ends ship too);
// with --evidence-ack central, every append waits for the store; with
// --anchor, it also runs for the anchorer's lock and, holding it, anchors
// the store in the fleet's transparency log. No --store: nothing, and
// stop does nothing.
func startCentral(o *serveOptions, store *evidence.Store, broker *approval.Broker, hub *events.Hub, logger *slog.Logger) (stop func(), gauges func() []daemon.Gauge, err error) {
	if o.store == "" {
		return func() {}, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), centralConnectWait)
	defer cancel()
	c, err := central.Open(ctx, o.store)
	if err != nil {
		return nil, nil, fmt.Errorf("--store: %w", err)
	}
	replica := o.replicaName()
	// The file is now a fleet's outbox: evidence prune checks that what it
	// removes has shipped.
	if err := store.SetShipsTo(central.Redact(o.store)); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("--store: note it in the evidence file: %w", err)
	}
	shipper, err := central.NewShipper(ctx, store, c, replica, logger)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("--store: %w", err)
	}
	var anchorer *central.Anchorer
	if o.anchor != "" {
		if anchorer, err = openAnchorer(ctx, o.anchor, c, logger); err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	desk, err := fleetDesk(ctx, o, c, replica, broker, hub, logger)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if o.evidenceAck == "central" {
		store.SetAcknowledge(shipper.Acknowledge)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { shipper.Run(runCtx) })
	if anchorer != nil {
		wg.Go(func() { anchorer.Run(runCtx) })
	}
	if desk != nil {
		wg.Go(func() { desk.Run(runCtx) })
	}
	logger.Info("shipping evidence to the central store", "store", central.Redact(o.store), "log", store.LogID(), "replica", replica, "ack", o.evidenceAck, "anchor", o.anchor)
	gauges = func() []daemon.Gauge {
		behind, failures := shipper.Health()
		return []daemon.Gauge{
			{Name: "browsergate_evidence_unshipped_seconds", Help: "How long the evidence file has held records the central store lacks (0: none).", Value: behind.Seconds()},
			{Name: "browsergate_evidence_ship_failures", Help: "Attempts to ship evidence to the central store that failed since the daemon started.", Value: float64(failures)},
		}
	}
	return func() {
		stopRun()
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), centralFlushWait)
		defer cancel()
		if err := shipper.Flush(ctx); err != nil {
			logger.Error("the last evidence records were not shipped; the next start ships them", "error", err)
		}
		if anchorer != nil {
			if err := anchorer.Log.Close(ctx); err != nil {
				logger.Error("the transparency log did not close cleanly", "error", err)
			}
		}
		c.Close()
	}, gauges, nil
}

// fleetDesk shares the held calls with the fleet's other replicas when
// this one has an operators' token file (--operator-token-file), whose
// contents key the answers that cross the store: every replica must have
// the same. Without one, held calls stay on their replica (nil).
func fleetDesk(ctx context.Context, o *serveOptions, c *central.Store, replica string, broker *approval.Broker, hub *events.Hub, logger *slog.Logger) (*approvalcentral.Desk, error) {
	if o.operatorTokens == "" || o.replica == "" {
		logger.Info("held calls are answered on their own replica: give every replica a --replica name and the same --operator-token-file to answer them on any")
		return nil, nil
	}
	key, err := os.ReadFile(o.operatorTokens)
	if err != nil {
		return nil, fmt.Errorf("--operator-token-file: %w", err)
	}
	desk, err := approvalcentral.New(ctx, c.Pool(), replica, key, broker, hub, logger)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	broker.SetFleet(desk)
	return desk, nil
}

// checkStoreFlags checks --store and --evidence-ack.
func (o *serveOptions) checkStoreFlags() error {
	switch o.evidenceAck {
	case "local":
	case "central":
		if o.store == "" {
			return fmt.Errorf("%w: --evidence-ack central needs --store: the central store acknowledges the records", errUsage)
		}
	default:
		return fmt.Errorf("%w: --evidence-ack must be local or central, not %q", errUsage, o.evidenceAck)
	}
	if o.store != "" {
		if err := central.CheckURL(o.store); err != nil {
			return fmt.Errorf("%w: --%v", errUsage, err)
		}
	}
	if o.anchor != "" && o.store == "" {
		return fmt.Errorf("%w: --anchor needs --store: the anchorer anchors the central store's records", errUsage)
	}
	return nil
}

// replicaName names this daemon in the central store: --replica, or the
// host's name.
func (o *serveOptions) replicaName() string {
	if o.replica != "" {
		return o.replica
	}
	host, _ := os.Hostname()
	return host
}

// openCentral connects an evidence command to the central store.
func openCentral(url string) (*central.Store, error) {
	if err := central.CheckURL(url); err != nil {
		return nil, fmt.Errorf("%w: --%v", errUsage, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), centralConnectWait)
	defer cancel()
	return central.OpenToRead(ctx, url)
}

// openStoreLog writes log logID of the central store into a temporary
// evidence file and opens it, so that a command reads it as a file.
func openStoreLog(c *central.Store, logID string) (*liveStore, error) {
	dir, err := os.MkdirTemp("", "browsergate-central-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "evidence.db")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	got, err := c.AssembleLog(ctx, logID, path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	store, err := evidence.Open(path, &evidence.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &liveStore{Store: store, copy: dir, ahead: got.Ahead, central: true}, nil
}

// readEnded reads the fleet's records of the sessions of log logID that
// ended as their leases expired (ended.go). An error is not the log's:
// show stops with it rather than show those sessions open.
func readEnded(c *central.Store, logID string) ([]fleet.Ended, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return fleet.ReadEnded(ctx, c.Pool(), logID)
}

// storeLogs are the logs of the central store a command reads: the one
// that holds session, or every log when session is "".
func storeLogs(c *central.Store, session string) ([]central.LogInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs, err := c.Logs(ctx)
	if err != nil || session == "" {
		return logs, err
	}
	id, err := c.LogOf(ctx, session)
	if err != nil {
		return nil, err
	}
	for _, l := range logs {
		if l.ID == id {
			return []central.LogInfo{l}, nil
		}
	}
	return nil, fmt.Errorf("no session %q in the central store", session)
}

// evidenceVerifyStore verifies every log of the central store at url, as
// evidence verify verifies a file, one after the other.
func evidenceVerifyStore(url string, pub ed25519.PublicKey, emptyOK bool, vouched map[string]bool, stdout io.Writer) error {
	c, err := openCentral(url)
	if err != nil {
		return err
	}
	defer c.Close()
	logs, err := storeLogs(c, "")
	if err != nil {
		return err
	}
	if len(logs) == 0 {
		if emptyOK {
			fmt.Fprintln(stdout, "note: the central store holds no log")
			return nil
		}
		return fmt.Errorf("the central store %s holds no evidence", central.Redact(url))
	}
	var bad []string
	for _, l := range logs {
		fmt.Fprintf(stdout, "log %s (replica %s):\n", l.ID, l.Replica)
		store, err := openStoreLog(c, l.ID)
		if err != nil {
			// A log that cannot be written back is as bad as one that
			// does not verify; the others are still verified.
			fmt.Fprintln(stdout, "FAIL:", evidence.Visible(err.Error()))
			bad = append(bad, l.ID)
			continue
		}
		signed, err := verifyOpened(store.Store, pub, stdout)
		if signed && vouched != nil {
			vouched[l.ID] = true
		}
		// The fleet's records are no part of the log: one that cannot
		// be read is said, and changes no verdict.
		ended, eerr := readEnded(c, l.ID)
		writeEnded(stdout, ended, eerr)
		if store.ahead > 0 {
			fmt.Fprintf(stdout, "note: %d record(s) beyond their session's head are left out: a shipper's batch in progress, or records put there behind it (the anchors, --central, tell)\n", store.ahead)
		}
		store.Close()
		if errors.Is(err, errTampered) {
			bad = append(bad, l.ID)
			continue
		}
		if err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d of %d log(s) of the central store: %v", errTampered, len(bad), len(logs), bad)
	}
	return nil
}

// evidenceSource is where an evidence command reads: a file (--evidence)
// or the central store (--store).
type evidenceSource struct{ file, store string }

// sourceFlags declares --evidence and --store.
func sourceFlags(fs *flag.FlagSet) *evidenceSource {
	s := &evidenceSource{}
	fs.StringVar(&s.file, "evidence", "", "bbolt evidence `FILE`")
	fs.StringVar(&s.store, "store", "", "read the central evidence store at `URL` (postgres://USER@HOST[:PORT]/DB; the password from PGPASSFILE, ~/.pgpass or PGPASSWORD) instead of a file")
	return s
}

// need is the usage error of `evidence sub` without one source, or with
// both.
func (s *evidenceSource) need(sub string) error {
	switch {
	case s.file != "" && s.store != "":
		return fmt.Errorf("%w: evidence %s reads --evidence FILE or --store URL, not both", errUsage, sub)
	case s.file == "" && s.store == "":
		return fmt.Errorf("%w: evidence %s needs --evidence FILE (or --store URL)", errUsage, sub)
	}
	return nil
}

// each opens the logs a command reads, one after the other, and hands each
// to fn with a name for messages: the file; or, in the central store, the
// log that holds session, or every log when session is "". one: the
// command is about one log (a report, a replay), and the store must
// name one.
func (s *evidenceSource) each(session string, one bool, fn func(store *liveStore, name string) error) error {
	if s.store == "" {
		store, err := openReadOnly(s.file)
		if err != nil {
			return err
		}
		defer store.Close()
		return fn(store, s.file)
	}
	c, err := openCentral(s.store)
	if err != nil {
		return err
	}
	defer c.Close()
	logs, err := storeLogs(c, session)
	if err != nil {
		return err
	}
	if len(logs) == 0 {
		return fmt.Errorf("the central store %s holds no evidence", central.Redact(s.store))
	}
	if one && len(logs) > 1 {
		return fmt.Errorf("%w: the central store holds %d logs (one a replica's file), and this reads one: name a --session, whose log is read", errUsage, len(logs))
	}
	for _, l := range logs {
		store, err := openStoreLog(c, l.ID)
		if err != nil {
			return err
		}
		if store.ended, err = readEnded(c, l.ID); err != nil {
			store.Close()
			return err
		}
		err = fn(store, fmt.Sprintf("log %s (replica %s)", l.ID, l.Replica))
		store.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// prunedShipped checks, before a prune of the sessions of store that ended
// before before, that a file a daemon ships to a central store is pruned
// with that store (storeURL) and that the store holds each of those
// sessions whole: the head's very bytes, every record up to it (the last
// one the head names) and every blob they name. A session pruned before
// it shipped would be in neither place, and leave the store a tombstone it
// cannot match, which stops the shipping.
func prunedShipped(store *evidence.Store, before time.Time, storeURL string) error {
	where := store.ShipsTo()
	if storeURL == "" {
		if where != "" {
			return fmt.Errorf("%w: evidence prune: this file ships to the central store %s (serve --store): give --store URL, so that only sessions the store holds whole are removed (one removed before it shipped would stop the shipping)", errUsage, evidence.Visible(where))
		}
		return nil
	}
	if err := central.CheckURL(storeURL); err != nil {
		return fmt.Errorf("%w: --store: %v", errUsage, err)
	}
	if where != "" && central.Redact(storeURL) != where {
		return fmt.Errorf("%w: evidence prune: --store %s is not the store this file ships to, %s", errUsage, central.Redact(storeURL), evidence.Visible(where))
	}
	sessions, err := store.Sessions()
	if err != nil {
		return err
	}
	var gone []*evidence.Whole
	var ids, blobs []string
	for _, s := range sessions {
		if !s.Last.Before(before) {
			continue
		}
		w, err := store.WholeOf(s.ID)
		if err != nil {
			return err
		}
		gone, ids, blobs = append(gone, w), append(ids, s.ID), append(blobs, w.Blobs...)
	}
	if len(gone) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), centralConnectWait)
	defer cancel()
	c, err := central.OpenToRead(ctx, storeURL)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	defer c.Close()
	shipped, err := c.Shipped(ctx, store.LogID())
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	counts, have, err := c.Holdings(ctx, store.LogID(), blobs)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	var behind []string
	for i, w := range gone {
		id := ids[i]
		whole := counts[id] == int64(w.Seq) && shipped.Records[id] == w.Seq && shipped.Hashes[id] == w.Hash
		what := fmt.Sprintf("the store has %d of its %d records", counts[id], w.Seq)
		if !whole && counts[id] == int64(w.Seq) {
			what += ", not as the file has them"
		}
		if !bytes.Equal(shipped.Heads[id], w.Head) {
			whole, what = false, what+", not its head as the file has it"
		}
		for _, b := range w.Blobs {
			if !have[b] {
				whole, what = false, what+", not its "+b
			}
		}
		if !whole {
			behind = append(behind, fmt.Sprintf("%s (%s)", quoteID(id), what))
		}
	}
	if len(behind) > 0 {
		return fmt.Errorf("evidence prune: nothing was removed: the central store does not hold %d of the sessions to remove whole: %s; start the daemon on this file with --store to ship them, then prune", len(behind), strings.Join(behind, ", "))
	}
	return nil
}
