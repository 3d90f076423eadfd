package queen

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// A fresh group in mode new whose first long poll finds the queue empty gets every message
// pushed while that poll waits. A 0.15 broker stores the group's start when a waiting pop
// looks again, after the newest message then, and the loop's subscriptionFrom of later pops
// cannot bring those back: the loop's first pop of the group must not be that waiting pop.
// (A default Consume lost all five before.)
func TestAFreshGroupGetsWhatIsPushedWhileItsFirstPollWaits(t *testing.T) {
	t.Parallel()
	for _, gen015 := range []bool{false, true} {
		t.Run(fmt.Sprintf("0.15=%v", gen015), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("fresh", gen015)
				c := f.client(t)
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()
				go func() {
					if f.awaitWaitingPop(ctx) {
						f.pushN("p", 5)
					}
				}()
				var got atomic.Int64
				err := c.Queue("fresh").Group("g").Limit(5).Each().Consume(ctx, func(context.Context, *Message) error {
					got.Add(1)
					return nil
				})
				require.NoError(t, err)
				assert.EqualValues(t, 5, got.Load())
				assert.NoError(t, ctx.Err(), "Limit, not the deadline, ended Consume")
			})
		})
	}
}

// The same against the reference broker, in both modes: the messages pushed as the group's
// first waiting pop reaches the broker are delivered.
func TestAFreshGroupGetsWhatIsPushedAsItsFirstWaitingPopArrives(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t)
		spy, base := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, base)
		direct := newTestClient(t, srv.URL())
		var pushed atomic.Bool
		spy.Override(func(r *http.Request) (int, bool) {
			if rt, _ := route.Match(r.Method, r.URL.Path); rt.Family == route.FamilyPop &&
				r.URL.Query().Get("wait") == "true" && !pushed.Swap(true) {
				pushN(t, direct, "fresh", "p", 5) // then the pop goes on to the broker
			}
			return 0, false
		})
		var got atomic.Int64
		err := c.Queue("fresh").Group("g").Limit(5).Each().Consume(testutil.Context(t), func(context.Context, *Message) error {
			got.Add(1)
			return nil
		})
		require.NoError(t, err)
		assert.EqualValues(t, 5, got.Load())
	})
}

// A new group's start holds across the calls of one client: a Pop that finds the queue empty,
// then a Consume, gets every message pushed in between, on a 0.15 broker too (whose first pop
// of the group stores no start on an empty queue, so that the Consume's own first pop would
// start after the newest message). A Pop that waits gets what is pushed while it waits.
func TestANewGroupsStartHoldsFromAPopToAConsume(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		t.Run("pop then consume", func(t *testing.T) {
			t.Parallel()
			srv := mode.Server(t)
			c := newTestClient(t, srv.URL())
			msgs, err := c.Queue("between").Group("g").Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Empty(t, msgs)
			pushN(t, c, "between", "p", 5)
			var got []string
			err = c.Queue("between").Group("g").Limit(5).Each().Consume(testutil.Context(t), func(_ context.Context, m *Message) error {
				got = append(got, m.TransactionID)
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, []string{"p-0", "p-1", "p-2", "p-3", "p-4"}, got)
		})
	})
	for _, gen015 := range []bool{false, true} {
		t.Run(fmt.Sprintf("a waiting pop, 0.15=%v", gen015), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("waiting", gen015)
				c := f.client(t)
				go func() {
					if f.awaitWaitingPop(t.Context()) {
						f.pushN("p", 3)
					}
				}()
				msgs, err := c.Queue("waiting").Group("g").Batch(10).Wait(true).Pop(t.Context())
				require.NoError(t, err)
				assert.Len(t, msgs, 3)
			})
		})
	}
}

// The group's first pop goes without wait only until an answer shows the broker: once a pop
// brought a message with an offset (a 2.0 broker, which stores a start at a group's first pop),
// a new group's first Consume pop waits at once.
func TestANewGroupsFirstPopWaitsOnABrokerKnownToStoreStartsAtOnce(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t)
		spy, base := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, base)
		pushN(t, c, "known", "p", 1)
		msgs, err := c.Queue("known").Pop(testutil.Context(t)) // queue mode: no start
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		spy.Reset()
		err = c.Queue("known").Group("g").Timeout(10*time.Millisecond).IdleTimeout(50*time.Millisecond).Each().
			Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
		require.NoError(t, err)
		pops := popQueries(spy)
		require.NotEmpty(t, pops)
		want := "true"
		if mode.V015 {
			want = "false"
		}
		assert.Equal(t, want, pops[0].Get("wait"), "the group's first pop")
		if len(pops) > 1 {
			assert.Equal(t, "true", pops[1].Get("wait"))
		}
		if mode.V015 {
			require.Greater(t, len(pops), 1)
			assert.True(t, pops[1].Has("subscriptionFrom"), "%v", url.Values(pops[1]))
		}
	})
}
