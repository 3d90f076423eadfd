package queen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// failing fails some messages on their first delivery (once), others on every one (always),
// completes the rest, and counts each message's deliveries.
type failing struct {
	mu           sync.Mutex
	once, always map[string]bool
	seen         map[string]int
}

func newFailOnce(ids ...string) *failing {
	f := &failing{once: map[string]bool{}, always: map[string]bool{}, seen: map[string]int{}}
	for _, id := range ids {
		f.once[id] = true
	}
	return f
}

func (f *failing) handle(_ context.Context, m *Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[m.TransactionID]++
	if f.always[m.TransactionID] || f.once[m.TransactionID] && f.seen[m.TransactionID] == 1 {
		return errors.New("failed")
	}
	return nil
}

// consumeFake consumes the fake's queue as group g from its oldest message, until done
// messages were completed.
func consumeFake(t *testing.T, f *fakeBroker, done int, h Handler) {
	t.Helper()
	c := f.client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	f.onComplete = func(n int) {
		if n == done {
			cancel()
		}
	}
	require.NoError(t, c.Queue(f.queue).Group("g").SubscriptionMode(SubscribeAll).Each().Consume(ctx, h))
}

// A message is dead-lettered by its own failures only. A 0.15 broker's retry counter belongs
// to the (partition, group): every failed adds one, and only a completed that finishes a whole
// leased batch resets it; so with retryLimit 3, messages 0, 5, 10 and 15 of a partition failing
// once each had message 15 dead-lettered on its first failure. The loop pops a failed message
// alone next, and completing it resets the counter: nothing is dead-lettered, at the cost of one
// pop of the partition per failure, and none on 2.0.
func TestMessagesFailingOnceEachAreNotDeadLetteredByTheirPartitionsCounter(t *testing.T) {
	t.Parallel()
	for _, gen015 := range []bool{false, true} {
		t.Run(fmt.Sprintf("0.15=%v", gen015), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("counter", gen015)
				f.retryLimit = 3
				f.pushN("p", 20)
				h := newFailOnce("p-0", "p-5", "p-10", "p-15")
				consumeFake(t, f, 20, h.handle)
				f.stats(func(f *fakeBroker) {
					assert.Empty(t, f.deadLettered)
					assert.Len(t, f.completed, 20)
				})
				for id, n := range h.seen {
					want := 1
					if h.once[id] {
						want = 2
					}
					assert.Equal(t, want, n, "deliveries of %s", id)
				}
			})
		})
	}
}

// With retryLimit n a message is handed to its handler n+1 times, then dead-lettered, whatever
// the other messages of its partition do: here two before it fail once each, and after it has
// been filed (which leaves a 0.15 broker's counter spent), the next one fails once too.
func TestAMessageIsHandledRetryLimitPlusOneTimesWhateverItsNeighboursDo(t *testing.T) {
	t.Parallel()
	for _, gen015 := range []bool{false, true} {
		t.Run(fmt.Sprintf("0.15=%v", gen015), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("limit", gen015)
				f.retryLimit = 2
				f.pushN("p", 7)
				h := newFailOnce("p-1", "p-2", "p-5")
				h.always["p-4"] = true
				consumeFake(t, f, 6, h.handle)
				f.stats(func(f *fakeBroker) { assert.Equal(t, []string{"p-4"}, f.deadLettered) })
				assert.Equal(t, 3, h.seen["p-4"], "retryLimit 2: handed out three times")
				assert.Equal(t, 2, h.seen["p-5"], "failed once, right after a message was filed")
			})
		})
	}
}

// When the pop of a failed message alone loses its answer, the message is leased to nobody
// until its lease runs out, and then comes back with the rest of its partition in one batch:
// the loop gives that batch back at once and pops the message alone again, so nothing is
// dead-lettered for other messages' failures.
func TestABatchOfAPartitionWhoseCounterWasNotResetIsPoppedAgainOneByOne(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeBroker("lost", true)
		f.retryLimit, f.dropPartitionPops = 1, 1
		f.pushN("p", 10)
		h := newFailOnce("p-0", "p-5")
		consumeFake(t, f, 10, h.handle)
		f.stats(func(f *fakeBroker) {
			assert.Empty(t, f.deadLettered)
			assert.Positive(t, f.expired, "the lost pop's lease ran out")
		})
	})
}

// The same on the reference broker in both modes, and what it costs: on 0.15 one pop of the
// partition per failure, on 2.0 none.
func TestMessagesFailingOnceEachAreNotDeadLetteredOnEitherMode(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t)
		spy, base := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, base)
		configureQueue(t, c, "counter", map[string]any{"retryLimit": 3})
		pushN(t, c, "counter", "p", 20)
		h := newFailOnce("p-0", "p-5", "p-10", "p-15")
		err := c.Queue("counter").Group("g").SubscriptionMode(SubscribeAll).RetryBackoff(time.Millisecond, time.Millisecond).
			Limit(24).Each().Consume(testutil.Context(t), h.handle)
		require.NoError(t, err)
		assert.Empty(t, deadLetters(t, c, "counter"))
		assert.Len(t, h.seen, 20)
		want := 0
		if mode.V015 {
			want = 4
		}
		assert.Equal(t, want, spy.Count(route.PopPartition), "pops of the partition, one per failure on 0.15")
	})
}
