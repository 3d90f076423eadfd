package queentest

import (
	"context"
	"fmt"

	"github.com/queenmq/queen-go/internal/broker"
)

// DeadLetters is how many dead letters are filed in queue, by every consumer group, read from
// the broker's state with no request.
func (s *Server) DeadLetters(queue string) int {
	_, total := s.engine.DeadLetters(broker.DLQQuery{Queue: queue, Limit: 1})
	return total
}

// Lag is how many messages of queue lie after group's cursors, summed over the queue's
// partitions: what the group has still to finish, leased or not. A group that has not popped
// the queue yet counts every message; group "" is queue mode (pops that name no group). An
// unknown queue has no lag.
func (s *Server) Lag(queue, group string) int64 {
	lag, _, _ := s.engine.Progress(queue, group)
	return lag
}

// WaitIdle returns nil once group has nothing left in queue: no message after its cursors and
// no lease held, so every message is acked, dead-lettered or skipped. It wakes on each change
// of the broker's state (a push, a pop, an ack, a lease expiry), with no polling; a group that
// has not popped the queue yet is idle only when the queue is empty, and group "" is queue
// mode. It returns an error wrapping ctx's error, with what was left, when ctx ends first, and
// an error when the server closes.
func (s *Server) WaitIdle(ctx context.Context, queue, group string) error {
	for {
		lag, leased, changed := s.engine.Progress(queue, group)
		if lag == 0 && !leased {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("queentest: WaitIdle(%q, %q): %d messages left (leased: %v): %w",
				queue, group, lag, leased, ctx.Err())
		case <-s.done:
			return fmt.Errorf("queentest: WaitIdle(%q, %q): server closed with %d messages left",
				queue, group, lag)
		}
	}
}
