package admin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// lostAnswer is a fault that lets the broker apply the next request and then drops its
// connection, so the client sends it again and the resend finds the work done.
var lostAnswer = queentest.Fault{After: true}

// requireOutcomeUnknownOnly checks that err says "may have been applied" and never "not found":
// a caller that took it for "not found" would believe nothing was deleted.
func requireOutcomeUnknownOnly(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, admin.ErrNotFound)
}

// A deletion whose answer was lost is sent again, and the resend finds nothing to delete: the
// error is ErrOutcomeUnknown alone, and the deletion did happen.
func TestADeletionWhoseAnswerWasLostIsNotNotFound(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		t.Run("queue", func(t *testing.T) {
			f := newFixtureIn(t, mode)
			ctx := context.Background()
			f.push(t, "orders", "", 1)
			f.srv.Fail(lostAnswer)

			requireOutcomeUnknownOnly(t, f.admin.DeleteQueue(ctx, "orders"))
			assert.Zero(t, f.srv.FaultsLeft())
			_, err := f.admin.QueueInfo(ctx, "orders")
			require.ErrorIs(t, err, admin.ErrNotFound, "the first request deleted it")
		})
		t.Run("consumer group", func(t *testing.T) {
			f := newFixtureIn(t, mode)
			ctx := context.Background()
			f.push(t, "orders", "", 1, 2)
			f.ackAll(t, f.pop(t, "orders", "billing", 1))
			f.srv.Fail(lostAnswer)

			requireOutcomeUnknownOnly(t, f.admin.DeleteConsumerGroup(ctx, "billing"))
			assert.Zero(t, f.srv.FaultsLeft())
			assert.Equal(t, int64(2), f.srv.Lag("orders", "billing"), "the group was forgotten: it owes both again")
		})
		t.Run("consumer group on a queue", func(t *testing.T) {
			f := newFixtureIn(t, mode)
			ctx := context.Background()
			f.push(t, "orders", "", 1)
			f.ackAll(t, f.pop(t, "orders", "billing", 1))
			f.srv.Fail(lostAnswer)

			requireOutcomeUnknownOnly(t, f.admin.DeleteConsumerGroupOnQueue(ctx, "billing", "orders"))
			assert.Equal(t, int64(1), f.srv.Lag("orders", "billing"))
		})
	})
}

// Without a lost answer, deleting what does not exist is ErrNotFound, and nothing else.
func TestDeletingWhatDoesNotExistIsNotFoundOnly(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		for _, err := range []error{
			f.admin.DeleteQueue(ctx, "nothing"),
			f.admin.DeleteConsumerGroup(ctx, "nobody"),
		} {
			require.ErrorIs(t, err, admin.ErrNotFound)
			assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown)
		}
	})
}

// A replay whose answer was lost is sent again and finds the dead letter gone: ErrOutcomeUnknown
// alone, and one copy stored. A 0.15 broker's emulated replay sends its push again, which the
// broker answers as a duplicate: the replay succeeds, still with one copy.
func TestAReplayWhoseAnswerWasLostIsNotNotFound(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		f.fileDeadLetters(t, "orders", "billing", 1)
		page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
		require.NoError(t, err)
		require.Len(t, page.DeadLetters, 1)

		if mode.V015 {
			f.srv.Fail(queentest.Fault{Route: "push", After: true})
			r, err := f.admin.ReplayDeadLetter(ctx, page.DeadLetters[0].ID)
			require.NoError(t, err)
			assert.True(t, r.Duplicate, "the resend found the copy the first push stored")
		} else {
			f.srv.Fail(lostAnswer)
			_, err := f.admin.ReplayDeadLetter(ctx, page.DeadLetters[0].ID)
			requireOutcomeUnknownOnly(t, err)
		}
		assert.Zero(t, f.srv.FaultsLeft())
		assert.Len(t, f.pop(t, "orders", "audit", 10), 2, "the message and exactly one copy")
	})
}

// Deleting a dead letter whose answer was lost: ErrOutcomeUnknown alone, and it is gone. (A 0.15
// broker cannot delete dead letters.)
func TestADeadLetterDeletionWhoseAnswerWasLostIsNotNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.fileDeadLetters(t, "orders", "billing", 1)
	page, err := f.admin.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, page.DeadLetters, 1)
	f.srv.Fail(lostAnswer)

	requireOutcomeUnknownOnly(t, f.admin.DeleteDeadLetter(ctx, page.DeadLetters[0].ID))
	assert.Zero(t, f.srv.DeadLetters("orders"))
}
