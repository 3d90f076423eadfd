package queen_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A loop's ack outlives a run of failures longer than the transport's retries.
func TestAcceptanceAcksOutliveBlips(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		srv.Fail(queentest.Fault{Route: "ack", Status: 503, Times: 8})
		err := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).Limit(1).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		assert.Zero(t, srv.Lag("q", "g"), "the completed ack reached the broker")
	})
}

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

// API.md Consume semantics: nil → completed, an error → failed with its text, Retry → retry,
// DeadLetter → dlq, a panic → failed with "panic: <value>"; the ack echoes leaseId and group.
func TestConsumeHandlerReturnDecidesTheAck_R135(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    queen.Handler
		want string
	}{
		{"nil", func(context.Context, *queen.Message) error { return nil },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"completed"}`},
		{"error", func(context.Context, *queen.Message) error { return errors.New("card declined") },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"failed","error":"card declined"}`},
		{"Retry", func(context.Context, *queen.Message) error { return queen.Retry(errors.New("busy")) },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"retry","error":"busy"}`},
		{"DeadLetter", func(context.Context, *queen.Message) error { return queen.DeadLetter(errors.New("poison")) },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"dlq","error":"poison"}`},
		{"panic", func(context.Context, *queen.Message) error { panic("boom") },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"failed","error":"panic: boom"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, acks := consumeOnce(t, func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
				pop20, tc.h)
			require.Len(t, acks, 1)
			assert.Equal(t, "/api/v1/ack/batch", acks[0].Path)
			jsonEq(t, `{"acknowledgments":[`+tc.want+`],"consumerGroup":"billing"}`, acks[0].Body)
		})
	}
}

// O18: "when message k fails it acks completed up to k−1, failed on k, and nothing above".
func TestConsumeFailureAcksNothingAbove_O18(t *testing.T) {
	t.Parallel()
	const threeMessages = `{"success":true,"queue":"orders","partition":"4","partitionId":"pid-4","leaseId":"lid-1","consumerGroup":"billing","messages":[
 {"id":"m1","transactionId":"t1","data":1,"partitionId":"pid-4","partition":"4","leaseId":"lid-1","consumerGroup":"billing","offset":1,"deliveryAttempt":1},
 {"id":"m2","transactionId":"t2","data":2,"partitionId":"pid-4","partition":"4","leaseId":"lid-1","consumerGroup":"billing","offset":2,"deliveryAttempt":1},
 {"id":"m3","transactionId":"t3","data":3,"partitionId":"pid-4","partition":"4","leaseId":"lid-1","consumerGroup":"billing","offset":3,"deliveryAttempt":1}]}`
	_, acks := consumeUntil(t, func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
		threeMessages, func(_ context.Context, m *queen.Message) error {
			if m.TransactionID == "t2" {
				return errors.New("bad")
			}
			return nil
		}, func(m *queen.Message) bool { return m.TransactionID == "t2" })
	require.Len(t, acks, 1)
	jsonEq(t, `{"consumerGroup":"billing","acknowledgments":[
		{"transactionId":"t1","partitionId":"pid-4","leaseId":"lid-1","status":"completed"},
		{"transactionId":"t2","partitionId":"pid-4","leaseId":"lid-1","status":"failed","error":"bad"}]}`, acks[0].Body)
}
