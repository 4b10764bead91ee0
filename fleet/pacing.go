package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Take takes the next turn of host on the fleet's schedule of manifest, a
// turn every interval (requests_per_second_per_host), and returns how long
// the caller waits before its request goes. A turn that would come more
// than within from now is not taken (ErrTooLate, wrapped with the wait).
//
// The schedule is one row per (manifest, host), its theoretical arrival
// time (GCRA with a burst of one): a turn is the later of that time and
// the database's clock, and the row advances to the turn plus interval, in
// one statement under the row's lock, so that the turns given to every
// replica are at least interval apart on one clock, the database's. The
// wait is counted from the database's clock as it answered, so replicas'
// clocks need not agree. A turn given and not used (its request
// cancelled while it waited) is not given back.
func (s *Store) Take(ctx context.Context, manifest, host string, interval, within time.Duration) (time.Duration, error) {
	if within < 0 {
		within = 0
	}
	var waitMicros float64
	err := s.pool.QueryRow(ctx, `
		INSERT INTO fleet_pacing AS p (manifest, host, tat)
		VALUES ($1, $2, clock_timestamp() + $3 * interval '1 microsecond')
		ON CONFLICT (manifest, host) DO UPDATE
			SET tat = greatest(p.tat, clock_timestamp()) + $3 * interval '1 microsecond'
			WHERE p.tat <= clock_timestamp() + $4 * interval '1 microsecond'
		RETURNING extract(epoch FROM p.tat - clock_timestamp()) * 1e6 - $3`,
		manifest, host, interval.Microseconds(), within.Microseconds()).Scan(&waitMicros)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%w (more than %s away)", ErrTooLate, within.Round(time.Millisecond))
	}
	if err != nil {
		return 0, storeErr("take a turn on the pacing schedule", err)
	}
	return max(0, time.Duration(waitMicros)*time.Microsecond), nil
}

// PruneSchedule forgets the hosts whose last turn is older than idle: their
// next request goes at once, as it would with the row there.
func (s *Store) PruneSchedule(ctx context.Context, idle time.Duration) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM fleet_pacing WHERE tat < clock_timestamp() - $1 * interval '1 microsecond'`, idle.Microseconds()); err != nil {
		return storeErr("prune the pacing schedule", err)
	}
	return nil
}
