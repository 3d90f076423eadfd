package queen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A handler's return decides the ack, and the error text reaches the broker.
func TestAcceptanceHandlerReturnDecidesTheAck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		handler queen.Handler
		status  string
		errText string
	}{
		{"nil", func(context.Context, *queen.Message) error { return nil }, "completed", ""},
		{"error", func(context.Context, *queen.Message) error { return errors.New("boom") }, "failed", "boom"},
		{"retry", func(context.Context, *queen.Message) error { return queen.Retry(errors.New("later")) }, "retry", "later"},
		{"dlq", func(context.Context, *queen.Message) error { return queen.DeadLetter(errors.New("bad")) }, "dlq", "bad"},
		{"panic", func(context.Context, *queen.Message) error { panic("kaboom") }, "failed", "panic: kaboom"},
	}
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, tap, c := tapped(t, m, queentest.WithManualClock())
				push(t, c, "q", "", map[string]string{"k": tc.name})
				var reported []error
				var mu sync.Mutex
				err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).RetryBackoff(0, 0).
					Limit(1).OnError(func(_ *queen.Message, err error) {
					mu.Lock()
					reported = append(reported, err)
					mu.Unlock()
				}).Each().Consume(testutil.Context(t), tc.handler)
				require.NoError(t, err, "Limit is a graceful stop")
				acks := sentAcks(tap)
				require.Len(t, acks, 1, "one ack for one handled message")
				assert.Equal(t, tc.status, acks[0]["status"])
				if tc.errText != "" {
					assert.Equal(t, tc.errText, acks[0]["error"])
					mu.Lock()
					assert.NotEmpty(t, reported, "a failure reaches OnError")
					mu.Unlock()
				}
			})
		}
	})
}

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

// IdleTimeout, ctx and Close are graceful stops: Consume returns nil.
func TestAcceptanceGracefulStopsReturnNil(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("idle", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			err := c.Queue("q").Timeout(5*time.Second).IdleTimeout(30*time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			assert.NoError(t, err)
		})
		t.Run("ctx", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			ctx, cancel := context.WithCancel(testutil.Context(t))
			done := make(chan error, 1)
			push(t, c, "q", "", 1)
			handled := make(chan struct{})
			go func() {
				done <- c.Queue("q").Each().Consume(ctx, func(context.Context, *queen.Message) error {
					close(handled)
					return nil
				})
			}()
			testutil.Recv(t, handled, "the handler")
			cancel()
			assert.NoError(t, testutil.Recv(t, done, "Consume to return"))
		})
		t.Run("close", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			push(t, c, "q", "", 1)
			done := make(chan error, 1)
			handled := make(chan struct{})
			go func() {
				done <- c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
					close(handled)
					return nil
				})
			}()
			testutil.Recv(t, handled, "the handler")
			require.NoError(t, c.Close())
			assert.NoError(t, testutil.Recv(t, done, "Consume to return"))
			require.NoError(t, c.Close(), "Close is idempotent")
		})
	})
}

// 401 and 403 end Consume with the error.
func TestAcceptanceConsumeFatalAuth(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("401", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m, queentest.WithToken("secret"))
			err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			var api *queen.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, 401, api.StatusCode)
		})
		t.Run("403", func(t *testing.T) {
			t.Parallel()
			srv, _, c := tapped(t, m)
			srv.Fail(queentest.Fault{Route: "pop", Status: 403, Times: 100})
			err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			var api *queen.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, 403, api.StatusCode)
		})
	})
}

// Every invalid setting of API.md's list is refused by the terminal call, naming the setting,
// before any request.
func TestAcceptanceInvalidOptionsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	q := c.Queue("q")
	h := func(context.Context, *queen.Message) error { return nil }
	bh := func(context.Context, []*queen.Message) error { return nil }
	cases := []struct {
		name string
		call func() error
		want string // the setting's name, as the error must say it
	}{
		{"Batch(0) pop", func() error { _, err := q.Batch(0).Pop(testutil.Context(t)); return err }, "batch"},
		{"Batch(0) consume", func() error { return q.Batch(0).Each().Consume(testutil.Context(t), h) }, "batch"},
		{"Batch(10001)", func() error { _, err := q.Batch(10001).Pop(testutil.Context(t)); return err }, "batch"},
		{"Partitions(65)", func() error { _, err := q.Partitions(65).Pop(testutil.Context(t)); return err }, "partitions"},
		{"Partitions(0)", func() error { return q.Partitions(0).Consume(testutil.Context(t), bh) }, "partitions"},
		{"Timeout(61s)", func() error { _, err := q.Timeout(61 * time.Second).Pop(testutil.Context(t)); return err }, "timeout"},
		{"Timeout(-1)", func() error { return q.Timeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "timeout"},
		{"Concurrency(0)", func() error { return q.Concurrency(0).Each().Consume(testutil.Context(t), h) }, "concurrency"},
		{"LeaseTime(-1)", func() error { _, err := q.LeaseTime(-time.Second).Pop(testutil.Context(t)); return err }, "lease"},
		{"IdleTimeout(-1)", func() error { return q.IdleTimeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "idle"},
		{"ShutdownTimeout(-1)", func() error { return q.ShutdownTimeout(-time.Second).Each().Consume(testutil.Context(t), h) }, "shutdown"},
		{"RenewLease(-1)", func() error { return q.RenewLease(true, -time.Second).Each().Consume(testutil.Context(t), h) }, "renew"},
		{"RetryBackoff(-1)", func() error { return q.RetryBackoff(-time.Second, time.Second).Each().Consume(testutil.Context(t), h) }, "backoff"},
		{"AckEvery(-1)", func() error { return q.AckEvery(-1, time.Second).Each().Consume(testutil.Context(t), h) }, "ackevery"},
		{"AckEvery(d<0)", func() error { return q.AckEvery(1, -time.Second).Each().Consume(testutil.Context(t), h) }, "ackevery"},
		{"Limit(-1)", func() error { return q.Limit(-1).Each().Consume(testutil.Context(t), h) }, "limit"},
		{"Conflation+AutoAck pop", func() error { _, err := q.Conflation(true).AutoAck(true).Pop(testutil.Context(t)); return err }, "conflation"},
		{"empty queue pop", func() error { _, err := c.Queue("").Pop(testutil.Context(t)); return err }, "queue"},
		{"empty queue push", func() error { _, err := c.Queue("").Push(testutil.Context(t), queen.PushItem{Data: 1}); return err }, "queue"},
		{"empty queue consume", func() error { return c.Queue("").Each().Consume(testutil.Context(t), h) }, "queue"},
		{"invalid raw JSON", func() error {
			_, err := q.Push(testutil.Context(t), queen.PushItem{Data: jsonRaw(`{"a":`)})
			return err
		}, "data"},
		{"invalid UTF-8 raw JSON", func() error {
			_, err := q.Push(testutil.Context(t), queen.PushItem{Data: jsonRaw("\"\xff\"")})
			return err
		}, "data"},
	}
	for _, tc := range cases {
		err := tc.call()
		if assert.ErrorIs(t, err, queen.ErrInvalidOption, tc.name) {
			norm := strings.ToLower(strings.NewReplacer(" ", "", "_", "").Replace(err.Error()))
			assert.Contains(t, norm, tc.want, "%s: the error names the setting: %v", tc.name, err)
		}
	}
	assert.Empty(t, tap.All(), "nothing was sent")
}

// Pop defaults: no wait, an empty non-nil slice and nil error when there is nothing.
func TestAcceptancePopDefaults(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m)
		msgs, err := c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.NotNil(t, msgs)
		assert.Empty(t, msgs)
		reqs := tap.All()
		require.Len(t, reqs, 1)
		assert.NotContains(t, reqs[0].RawQuery, "wait=true", "Pop does not long-poll by default")
		push(t, c, "q", "", map[string]int{"n": 7})
		msgs, err = c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		var v struct{ N int }
		require.NoError(t, msgs[0].Decode(&v))
		assert.Equal(t, 7, v.N)
		assert.Equal(t, "q", msgs[0].Queue)
		assert.Equal(t, "Default", msgs[0].Partition)
		assert.Equal(t, m.Offset(0), msgs[0].Offset)
		assert.Equal(t, m.Attempt(1), msgs[0].DeliveryAttempt)
		assert.NotEmpty(t, msgs[0].LeaseID)
		assert.NotEmpty(t, msgs[0].TransactionID)
		assert.False(t, msgs[0].CreatedAt.IsZero())
	})
}

// A second settle of a message returns ErrAlreadySettled and sends nothing.
func TestAcceptanceSecondSettle(t *testing.T) {
	t.Parallel()
	settles := map[string]func(ctx context.Context, m *queen.Message) error{
		"Ack":        func(ctx context.Context, m *queen.Message) error { return m.Ack(ctx) },
		"Nack":       func(ctx context.Context, m *queen.Message) error { return m.Nack(ctx, errors.New("x")) },
		"Retry":      func(ctx context.Context, m *queen.Message) error { return m.Retry(ctx) },
		"DeadLetter": func(ctx context.Context, m *queen.Message) error { return m.DeadLetter(ctx, errors.New("x")) },
	}
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for first, f1 := range settles {
			t.Run(first, func(t *testing.T) {
				t.Parallel()
				_, tap, c := tapped(t, m, queentest.WithManualClock())
				push(t, c, "q", "", 1)
				msgs, err := c.Queue("q").Pop(testutil.Context(t))
				require.NoError(t, err)
				require.Len(t, msgs, 1)
				require.NoError(t, f1(testutil.Context(t), msgs[0]))
				n := len(sentAcks(tap))
				require.Equal(t, 1, n)
				for second, f2 := range settles {
					assert.ErrorIs(t, f2(testutil.Context(t), msgs[0]), queen.ErrAlreadySettled, "%s after %s", second, first)
				}
				_, err = c.Ack(testutil.Context(t), msgs[0], queen.StatusCompleted)
				assert.ErrorIs(t, err, queen.ErrAlreadySettled, "Client.Ack after %s", first)
				assert.Len(t, sentAcks(tap), 1, "a second settle sends nothing")
			})
		}
	})
}

// With AutoAck(false) a handler that returns an error has what it left unsettled nacked failed.
func TestAcceptanceAutoAckOffNacksTheRest(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "p", 0, 1)
		err := c.Queue("q").Batch(2).AutoAck(false).RetryBackoff(0, 0).Limit(2).
			Consume(testutil.Context(t), func(ctx context.Context, msgs []*queen.Message) error {
				require.Len(t, msgs, 2)
				require.NoError(t, msgs[0].Ack(ctx))
				return errors.New("second broke")
			})
		require.NoError(t, err)
		var got []string
		for _, a := range sentAcks(tap) {
			got = append(got, a["status"].(string))
		}
		assert.Equal(t, []string{"completed", "failed"}, got)
	})
}

func jsonRaw(s string) any { return json.RawMessage(s) }
