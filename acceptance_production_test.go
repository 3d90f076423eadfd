package queen_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A failing message waits min·2^(failures−1), capped at max, before it is handled again; a
// RetryAfter waits its own d. Only lower bounds are checked: jitter only adds.
func TestAcceptanceRetryBackoffWaits(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m)
		push(t, c, "q", "", 0)
		const lo, hi = 30 * time.Millisecond, 45 * time.Millisecond
		var at []time.Time
		err := c.Queue("q").RetryBackoff(lo, hi).Limit(4).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				at = append(at, time.Now())
				switch len(at) {
				case 1, 2:
					return errors.New("boom")
				case 3:
					return queen.RetryAfter(2*lo, errors.New("later"))
				}
				return nil
			})
		require.NoError(t, err)
		require.Len(t, at, 4)
		assert.GreaterOrEqual(t, at[1].Sub(at[0]), lo, "first failure waits min")
		assert.GreaterOrEqual(t, at[2].Sub(at[1]), hi, "second failure waits 2·min capped at max")
		assert.GreaterOrEqual(t, at[3].Sub(at[2]), 2*lo, "RetryAfter waits its d")
		assert.Equal(t, []string{"failed", "failed", "retry", "completed"}, statuses(tap),
			"each failure spends one retry, the retry none")
	})
}

// A waiting message holds no Concurrency slot: another partition keeps flowing. A stop cuts
// the wait short and acks what it held back with its own outcome.
func TestAcceptanceBackoffHoldsNoSlot(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m)
		push(t, c, "q", "slow", "s")
		push(t, c, "q", "fast", 0, 1, 2)
		ctx, cancel := context.WithCancel(testutil.Context(t))
		defer cancel()
		var mu sync.Mutex
		var order []string
		fast := 0
		err := c.Queue("q").RetryBackoff(time.Minute, time.Minute).Concurrency(1).Batch(1).Each().
			Consume(ctx, func(_ context.Context, msg *queen.Message) error {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, msg.Partition)
				if msg.Partition == "slow" {
					return errors.New("boom")
				}
				if fast++; fast == 3 {
					cancel()
				}
				return nil
			})
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 3, fast, "the fast partition flowed while the slow one waited: %v", order)
		var slowAcks []string
		for _, a := range sentAcks(tap) {
			if a["error"] == "boom" {
				slowAcks = append(slowAcks, a["status"].(string))
			}
		}
		assert.Equal(t, []string{"failed"}, slowAcks, "the held failure is acked failed once, at the stop")
	})
}

// AckEvery(n, 0) acks the handled prefix of a leased batch every n messages.
func TestAcceptanceAckEvery(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		acked := make(chan queen.AckedEvent, 16)
		_, _, c := tappedWith(t, m, []queen.Option{queen.WithHooks(queen.Hooks{
			Acked: func(e queen.AckedEvent) { acked <- e },
		})}, queentest.WithManualClock())
		push(t, c, "q", "", 0, 1, 2, 3, 4)
		err := c.Queue("q").Batch(5).AckEvery(2, 0).Limit(5).Each().
			Consume(testutil.Context(t), func(_ context.Context, msg *queen.Message) error {
				var n int
				require.NoError(t, msg.Decode(&n))
				if n == 2 { // the first two are acked before the third is done
					for range 2 {
						e := testutil.Recv(t, acked, "a progress ack")
						assert.Equal(t, queen.StatusCompleted, e.Status)
						assert.True(t, e.Success)
					}
				}
				return nil
			})
		require.NoError(t, err)
	})
}

// Ping reads /health: status, and the version as sent.
func TestAcceptancePing(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithToken("tok"))
		info, err := c.Ping(testutil.Context(t))
		require.NoError(t, err, "health needs no token")
		assert.Equal(t, "healthy", info.Status)
		if m.V015 {
			assert.Equal(t, "1.0.0", info.Version)
		}
	})
}

// With no Batch set, a 0.15 backlog is consumed in batches: at most one pop per 10 messages.
func TestAcceptanceDefaultsBatchOn015(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		const n = 200
		data := make([]any, n)
		for i := range data {
			data[i] = i
		}
		push(t, c, "q", "", data...)
		err := c.Queue("q").Limit(n).Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		pops := tap.Containing("/pop")
		assert.LessOrEqual(t, pops, n/10, "pops for %d messages", n)
		acks := tap.Containing("/ack")
		assert.LessOrEqual(t, acks, n/10, "ack requests for %d messages", n)
	})
}

// A `new` group whose first pops find the queue empty still gets every message pushed after.
func TestAcceptanceNewGroupAfterAnEmptyFirstPop(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("pop", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			push(t, c, "q", "", "before")
			g := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeNew)
			msgs, err := g.Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Empty(t, msgs, "a new group skips what was there")
			push(t, c, "q", "", 0, 1, 2, 3, 4)
			msgs, err = g.Batch(10).Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, msgs, 5)
		})
		t.Run("consume", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			g := c.Queue("q2").Group("g")
			require.NoError(t, g.Timeout(10*time.Millisecond).IdleTimeout(20*time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil }))
			push(t, c, "q2", "", 0, 1, 2, 3, 4)
			var got []int
			require.NoError(t, g.Limit(5).Each().Consume(testutil.Context(t), func(_ context.Context, msg *queen.Message) error {
				var n int
				require.NoError(t, msg.Decode(&n))
				got = append(got, n)
				return nil
			}))
			assert.Equal(t, []int{0, 1, 2, 3, 4}, got)
		})
	})
}
