package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/browsergate/browsergate/daemon"
	"github.com/browsergate/browsergate/evidence/central"
	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/fleet"
)

// pacingIdle is how long the fleet's schedule keeps a host's row after
// its last turn: an older row paces nothing (its next request goes at
// once either way).
const pacingIdle = 10 * time.Minute

// fleetLimits are the limits a fleet shares in the store (--store): the
// session leases for the HTTP front and the pacing schedule for the
// executor. Without --store both are nil, and the daemon counts alone.
type fleetLimits struct {
	store *fleet.Store
	stop  func()
}

// openFleet connects to the fleet's tables in the store (--store), and
// prunes the pacing schedule now and then until close. Its leases carry
// logID, the evidence log's id, so that the fleet can record the end of
// their sessions in that log should this replica die.
func openFleet(o *serveOptions, logID string, logger *slog.Logger) (*fleetLimits, error) {
	if o.store == "" {
		return &fleetLimits{stop: func() {}}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), centralConnectWait)
	defer cancel()
	s, err := fleet.Open(ctx, o.store, &fleet.Options{Replica: o.replicaName(), LeaseFor: o.sessionLease, LogID: logID})
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", central.Redact(o.store), err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				if err := s.PruneSchedule(runCtx, pacingIdle); err != nil && runCtx.Err() == nil {
					logger.Warn("the fleet's pacing schedule was not pruned", "error", err)
				}
			}
		}
	}()
	logger.Info("limits held across the fleet", "store", central.Redact(o.store), "replica", o.replicaName(), "session_lease", s.LeaseFor())
	return &fleetLimits{store: s, stop: func() { stopRun(); <-done; s.Close() }}, nil
}

// leases are the front's fleet-wide session leases (nil without --store).
func (f *fleetLimits) leases() daemon.Leases {
	if f.store == nil {
		return nil
	}
	return f.store
}

// pacing is the executor's fleet-wide schedule (nil without --store).
func (f *fleetLimits) pacing() web.Schedule {
	if f.store == nil {
		return nil
	}
	return f.store
}
