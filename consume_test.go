package queen

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// After ctx is done: running handlers finish and are acked, unstarted messages come back at
// once (no expiry needed), nothing is lost or handled twice, and Consume returns nil.
func TestAStopLetsRunningHandlersFinishAndReleasesTheRest(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeBrokerAndClient(t, mode, queentest.WithManualClock())
		pushN(t, c, "cancel", "p", 10)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		started, release := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		var first []int
		done := testutil.Go(func() error {
			return c.Queue("cancel").Batch(10).Each().Consume(ctx, func(hctx context.Context, m *Message) error {
				i := decode(t, m).I
				mu.Lock()
				first = append(first, i)
				mu.Unlock()
				if i == 2 {
					close(started)
					select { // bounded: a failed wait below must not leave Close waiting forever
					case <-release:
					case <-time.After(testutil.Timeout):
					}
					if hctx.Err() != nil {
						t.Error("the handler ctx was cancelled within the shutdown grace")
					}
				}
				return nil
			})
		})
		testutil.Recv(t, started, "the third message")
		cancel()
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.Equal(t, []int{0, 1, 2}, first)

		// Released with retry: they are there now, one attempt higher, on an unmoved clock.
		var second []int
		err := c.Queue("cancel").Limit(7).Batch(10).Each().Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			assert.Equal(t, mode.Attempt(2), m.DeliveryAttempt)
			second = append(second, decode(t, m).I)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []int{3, 4, 5, 6, 7, 8, 9}, second)
		assert.Empty(t, drain(t, c, "cancel"))
	})
}

// A handler still running when ShutdownTimeout passes has its ctx cancelled; its ack is still
// sent, on a ctx of the loop's own.
func TestAHandlerCancelledByTheShutdownTimeoutIsStillAcked(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	pushN(t, c, "grace", "p", 1)
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	done := testutil.Go(func() error {
		return c.Queue("grace").ShutdownTimeout(0).Each().Consume(ctx, func(hctx context.Context, m *Message) error {
			close(started)
			<-hctx.Done()
			return nil // finished its work despite the cancel
		})
	})
	testutil.Recv(t, started, "the handler")
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.Empty(t, drain(t, c, "grace"), "the message was acked completed after the cancel")
}

// Close stops a running Consume, which returns nil; a later Consume returns ErrClosed.
func TestCloseStopsARunningConsume(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	polling := newCloseOnce()
	proxy.Override(func(r *http.Request) (int, bool) {
		if testutil.RouteOf(r).Family == route.FamilyPop {
			polling.close()
		}
		return 0, false
	})
	c, err := New(url)
	require.NoError(t, err)
	h := func(context.Context, *Message) error { return nil }
	done := testutil.Go(func() error { return c.Queue("idle").Each().Consume(testutil.Context(t), h) })
	testutil.Recv(t, polling.done(), "the first pop")
	require.NoError(t, c.Close())
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.ErrorIs(t, c.Queue("idle").Each().Consume(testutil.Context(t), h), ErrClosed)
}

// Renewal is on by default and RenewLease(false, 0) turns it off. Each renewal extends by
// LeaseTime when set, else by 60s; the period is RenewLease's every when set, else half of
// what is left of the lease each time (0 here).
func TestRenewLeaseIsOnByDefaultAndExtendsByTheLeaseTime(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1")
	h := eachHandling(func(context.Context, *Message) error { return nil })
	cases := []struct {
		name          string
		b             QueueBuilder
		on            bool
		every, extend time.Duration
	}{
		{"default", c.Queue("q"), true, 0, 60 * time.Second},
		{"off", c.Queue("q").RenewLease(false, 0), false, 0, 60 * time.Second},
		{"no LeaseTime", c.Queue("q").RenewLease(true, 0), true, 0, 60 * time.Second},
		{"LeaseTime", c.Queue("q").LeaseTime(20*time.Second).RenewLease(true, 0), true, 0, 20 * time.Second},
		{"every set", c.Queue("q").LeaseTime(20*time.Second).RenewLease(true, 3*time.Second), true, 3 * time.Second, 20 * time.Second},
		{"every set, no LeaseTime", c.Queue("q").RenewLease(true, 4*time.Second), true, 4 * time.Second, 60 * time.Second},
	}
	for _, tc := range cases {
		l := newConsumer(t.Context(), tc.b, h)
		assert.Equal(t, tc.on, l.renew, tc.name)
		assert.Equal(t, tc.every, l.renewEvery, tc.name)
		assert.Equal(t, tc.extend, l.renewExtend, tc.name)
	}
}
