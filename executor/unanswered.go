package executor

import (
	"context"
	"errors"
	"fmt"
)

// unanswered says what an error of a call whose time ran out means: the
// page did not answer in time (a renderer kept busy by a script that
// never yields does this), rather than Chromium's bare "context deadline
// exceeded"; the call ended, so the session takes calls again.
func (s *session) unanswered(ctx context.Context, err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: the page did not answer within the call's timeout (timeout_seconds %d): its renderer may be kept busy by a script that never yields; navigate elsewhere (the tab is replaced if the page still does not answer)",
		err, s.manifest.Tool.TimeoutSeconds)
}
