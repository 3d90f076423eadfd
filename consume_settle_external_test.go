package queen_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// The handler's return is the ack, on either broker: nil completes, an error fails with its
// text, Retry retries, DeadLetter files a dead letter, a panic fails as "panic: <value>"; the
// ack echoes the message's identifiers and its group, and a failure reaches OnError.
func TestTheHandlersReturnIsTheAck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		handler queen.Handler
		status  string
		errText string
	}{
		{"nil", func(context.Context, *queen.Message) error { return nil }, "completed", ""},
		{"error", func(context.Context, *queen.Message) error { return errors.New("card declined") }, "failed", "card declined"},
		{"Retry", func(context.Context, *queen.Message) error { return queen.Retry(errors.New("busy")) }, "retry", "busy"},
		{"DeadLetter", func(context.Context, *queen.Message) error { return queen.DeadLetter(errors.New("poison")) }, "dlq", "poison"},
		{"panic", func(context.Context, *queen.Message) error { panic("boom") }, "failed", "panic: boom"},
	}
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, tap, c := tapped(t, m, queentest.WithManualClock())
				push(t, c, "orders", "", map[string]string{"k": tc.name})
				var reported []error
				var handed *queen.Message
				var mu sync.Mutex
				err := c.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).RetryBackoff(0, 0).
					Limit(1).OnError(func(_ *queen.Message, err error) {
					mu.Lock()
					reported = append(reported, err)
					mu.Unlock()
				}).Each().Consume(testutil.Context(t), func(ctx context.Context, msg *queen.Message) error {
					handed = msg
					return tc.handler(ctx, msg)
				})
				require.NoError(t, err, "Limit is a graceful stop")
				requests := tap.Of(route.FamilyAck)
				require.Len(t, requests, 1, "one ack for one handled message")
				assert.Equal(t, route.AckBatch, requests[0].Route)
				var body struct {
					ConsumerGroup   string              `json:"consumerGroup"`
					Acknowledgments []map[string]string `json:"acknowledgments"`
				}
				require.NoError(t, json.Unmarshal(requests[0].Body, &body))
				assert.Equal(t, "billing", body.ConsumerGroup)
				want := map[string]string{"transactionId": handed.TransactionID, "partitionId": handed.PartitionID,
					"leaseId": handed.LeaseID, "status": tc.status}
				if tc.errText != "" {
					want["error"] = tc.errText
				}
				assert.Equal(t, []map[string]string{want}, body.Acknowledgments)
				mu.Lock()
				defer mu.Unlock()
				assert.Equal(t, tc.errText != "", len(reported) > 0, "a failure, and only a failure, reaches OnError: %v", reported)
			})
		}
	})
}

// With AutoAck(false) a handler that returns an error has what it left unsettled acked failed.
func TestWithoutAutoAckWhatAFailingHandlerLeftIsFailed(t *testing.T) {
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

// A failing message waits min·2^(failures−1), capped at max, before it is handled again; a
// RetryAfter waits its own d; each failure spends one retry and the retry none. Only lower
// bounds are checked: jitter only adds.
func TestABackoffWaitsBeforeTheMessageComesBack(t *testing.T) {
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
func TestAWaitingMessageHoldsNoHandlerSlot(t *testing.T) {
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
func TestAckEveryAcksTheHandledPrefixAsItGoes(t *testing.T) {
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

// When message k of a batch fails, the loop acks completed up to k−1, failed on k, and nothing
// above it: a 0.15 broker seeing a completed above a failed moves past the failed message and
// loses it.
func TestAFailureAcksNothingAboveIt(t *testing.T) {
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
