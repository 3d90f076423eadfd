package queen_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A BatchHandler's error fails the whole partition's batch; nil completes it.
func TestAcceptanceBatchHandlerOutcome(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "p1", 1, 2, 3)
		var got [][]*queen.Message
		err := c.Queue("q").Batch(10).Limit(3).Consume(testutil.Context(t), func(_ context.Context, msgs []*queen.Message) error {
			got = append(got, msgs)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Len(t, got[0], 3)
		acks := sentAcks(tap)
		require.Len(t, acks, 3)
		for _, a := range acks {
			assert.Equal(t, "completed", a["status"])
		}
	})
}

// Messages of one partition are handled one at a time in offset order, several partitions in
// parallel.
func TestAcceptancePerPartitionOrderWithConcurrency(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		const parts, per = 4, 8
		for p := range parts {
			data := make([]any, per)
			for i := range per {
				data[i] = i
			}
			push(t, c, "q", fmt.Sprint("p", p), data...)
		}
		var mu sync.Mutex
		seenBy := map[string][]int{}
		busy := map[string]bool{}
		var overlap atomic.Bool
		err := c.Queue("q").Concurrency(4).Batch(3).Partitions(4).Limit(parts*per).Each().
			Consume(testutil.Context(t), func(_ context.Context, msg *queen.Message) error {
				var n int
				require.NoError(t, msg.Decode(&n))
				mu.Lock()
				if busy[msg.Partition] {
					overlap.Store(true)
				}
				busy[msg.Partition] = true
				seenBy[msg.Partition] = append(seenBy[msg.Partition], n)
				mu.Unlock()
				mu.Lock()
				busy[msg.Partition] = false
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		assert.False(t, overlap.Load(), "two handlers ran at once on one partition")
		require.Len(t, seenBy, parts)
		for p, got := range seenBy {
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, got, "partition %s", p)
		}
	})
}

// Limit(n) returns nil after n handler returns; leased messages never started come back at
// once (released with retry), not after their lease.
func TestAcceptanceLimitReleasesTheRest(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1, 2, 3, 4)
		var calls atomic.Int32
		err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(5).Limit(3).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				calls.Add(1)
				return nil
			})
		require.NoError(t, err)
		assert.EqualValues(t, 3, calls.Load())
		statuses := map[string]int{}
		for _, a := range sentAcks(tap) {
			statuses[a["status"].(string)]++
		}
		// The release may be one retry on the lowest unstarted message: in a batch ack the
		// broker then hands back everything above it too.
		assert.Equal(t, 3, statuses["completed"])
		assert.Positive(t, statuses["retry"])
		assert.Len(t, statuses, 2)
		rest, err := c.Queue("q").Group("g").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, rest, 2, "the unstarted messages are available at once")
		var first int
		require.NoError(t, rest[0].Decode(&first))
		assert.Equal(t, 3, first)
	})
}

// Handled hooks see every outcome, a panic flagged.
func TestAcceptanceHandledHookSeesPanics(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		var mu sync.Mutex
		var events []queen.HandledEvent
		_, _, c := tappedWith(t, m, []queen.Option{queen.WithHooks(queen.Hooks{Handled: func(e queen.HandledEvent) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}})}, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		var onErr error
		err := c.Queue("q").Limit(1).OnError(func(_ *queen.Message, err error) { onErr = err }).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error { panic(errors.New("bang")) })
		require.NoError(t, err)
		require.Error(t, onErr)
		assert.True(t, strings.Contains(onErr.Error(), "bang"), "%v", onErr)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, events, 1)
		assert.True(t, events[0].Panicked)
		assert.Equal(t, queen.StatusFailed, events[0].Outcome)
	})
}

// Limit(n) across several handler goroutines hands out exactly n messages.
func TestAcceptanceLimitAcrossGoroutines(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		for _, p := range []string{"a", "b", "c", "d"} {
			push(t, c, "q", p, 0, 1, 2, 3, 4)
		}
		var mu sync.Mutex
		calls := 0
		err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Concurrency(4).Limit(7).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				mu.Lock()
				calls++
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, 7, calls)
		rest, err := c.Queue("q").Group("g").Batch(100).Partitions(4).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, rest, 13, "everything not handled is available at once")
	})
}
