package queen_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// After ctx is done an in-flight handler finishes with its ctx still live, its ack is sent,
// and the leased messages it never started come back at once.
func TestAcceptanceStopGivesInFlightHandlersTheirGrace(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1, 2)
		ctx, cancel := context.WithCancel(testutil.Context(t))
		started, release := make(chan struct{}), make(chan struct{})
		handlerCtxErr := make(chan error, 1)
		done := make(chan error, 1)
		calls := 0
		go func() {
			done <- c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(3).
				ShutdownTimeout(10*time.Second).Each().Consume(ctx, func(hctx context.Context, _ *queen.Message) error {
				calls++
				close(started)
				<-release
				handlerCtxErr <- hctx.Err()
				return nil
			})
		}()
		testutil.Recv(t, started, "the first handler")
		cancel()
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.NoError(t, <-handlerCtxErr, "the handler's ctx stays live within ShutdownTimeout")
		assert.Equal(t, 1, calls, "no new handler starts after the stop")
		got := statuses(tap)
		require.NotEmpty(t, got)
		assert.Equal(t, "completed", got[0], "the in-flight handler's ack is still sent")
		rest, err := c.Queue("q").Group("g").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, rest, 2, "the unstarted messages are released, not held until the lease ends")
	})
}

// A handler still running at ShutdownTimeout has its ctx cancelled; an error it then returns is
// acked retry, never failed.
func TestAcceptanceStopIsNotAFailure(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		ctx, cancel := context.WithCancel(testutil.Context(t))
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.Queue("q").ShutdownTimeout(time.Millisecond).Each().
				Consume(ctx, func(hctx context.Context, _ *queen.Message) error {
					close(started)
					<-hctx.Done()
					return hctx.Err()
				})
		}()
		testutil.Recv(t, started, "the handler")
		cancel()
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.Equal(t, []string{"retry"}, statuses(tap))
	})
}

// Shutdown returns at its ctx's end while a handler ignores its ctx; Consume still waits for it
// and its ack is still sent.
func TestAcceptanceShutdownWithAStuckHandler(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.Queue("q").ShutdownTimeout(time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
					close(started)
					<-release
					return nil
				})
		}()
		testutil.Recv(t, started, "the handler")
		sctx, cancel := context.WithTimeout(testutil.Context(t), 30*time.Millisecond)
		defer cancel()
		err := c.Shutdown(sctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		select {
		case err := <-done:
			t.Fatalf("Consume returned (%v) while its handler runs", err)
		default:
		}
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.NotEmpty(t, statuses(tap), "the stuck handler's ack is still sent")
		assert.NoError(t, c.Shutdown(testutil.Context(t)), "a second Shutdown with nothing running")
	})
}

// Transactions: all or nothing; a rollback wraps ErrTransactionFailed, a lost answer
// ErrOutcomeUnknown and never ErrTransactionFailed.
func TestAcceptanceTransactions(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("commit", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).
				Push("out", queen.PushItem{Data: 2}).PushTo("out", "p2", queen.PushItem{Data: 3}).Commit(testutil.Context(t))
			require.NoError(t, err)
			out, err := c.Queue("out").Batch(10).Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1)
			out, err = c.Queue("out").Partition("p2").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1)
			assert.ErrorIs(t, msgs[0].Ack(testutil.Context(t)), queen.ErrAlreadySettled, "the transaction settled it")
		})
		t.Run("rollback", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").LeaseTime(time.Second).Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			tx := c.Transaction()
			if m.V015 { // 0.15 fails a transaction holding a retry
				tx.Ack(msgs[0], queen.StatusRetry)
			} else { // 2.0 fails one whose lease has ended
				srv.Advance(time.Hour)
				tx.Ack(msgs[0], queen.StatusCompleted)
			}
			_, err = tx.Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			require.ErrorIs(t, err, queen.ErrTransactionFailed)
			assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown)
			out, err := c.Queue("out").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Empty(t, out, "nothing of a rolled back transaction is applied")
		})
		t.Run("lost answer", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			srv.Fail(queentest.Fault{Route: "transaction", After: true})
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			require.ErrorIs(t, err, queen.ErrOutcomeUnknown)
			assert.NotErrorIs(t, err, queen.ErrTransactionFailed)
			out, err := c.Queue("out").Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, out, 1, "the broker applied it")
		})
		t.Run("lost answer 503", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m, queentest.WithManualClock())
			push(t, c, "in", "", 1)
			msgs, err := c.Queue("in").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			srv.Fail(queentest.Fault{Route: "transaction", After: true, Status: 503})
			_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
			assert.NotErrorIs(t, err, queen.ErrTransactionFailed, "a transaction that may have been applied is not reported rolled back")
			if err == nil {
				return // a retry found it applied and said so: fine
			}
			assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
		})
	})
}

// OutcomeOf says which ack a handler's return means.
func TestAcceptanceOutcomeOf(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	assert.Equal(t, queen.StatusCompleted, queen.OutcomeOf(nil))
	assert.Equal(t, queen.StatusFailed, queen.OutcomeOf(boom))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(queen.Retry(boom)))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(queen.RetryAfter(time.Second, boom)))
	assert.Equal(t, queen.StatusDLQ, queen.OutcomeOf(queen.DeadLetter(boom)))
	assert.Equal(t, queen.StatusRetry, queen.OutcomeOf(errors.Join(errors.New("ctx"), queen.Retry(boom))), "wrapped")
	assert.ErrorIs(t, queen.Retry(boom), boom)
	assert.ErrorIs(t, queen.DeadLetter(boom), boom)
	assert.ErrorIs(t, queen.RetryAfter(time.Second, boom), boom)
}
