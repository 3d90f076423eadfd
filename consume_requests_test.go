package queen_test

// The pop queries and acks of Consume, as R137, O18 and API.md's "never spin" state them.

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

// R137 with Limit: Limit is not Batch; the pop of a Consume with Limit(1) and no Batch leaves
// the batch to the broker's autopilot.
func TestConsumeLimitLeavesBatchToAutopilot_R137(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pops, acks testutil.Spy
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Respond(200, pop20))
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`), acks.Respond(200, `[{"success":true}]`))
	err := c.Queue("orders").Limit(1).Each().Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
	require.NoError(t, err)
	first := queryOf(t, pops.All()[0])
	assert.Equal(t, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}, first)
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

// "they never end the loop and never spin": with Timeout(0) every long poll answers at once,
// so the loop must pause between empty answers.
func TestConsumeTimeoutZeroDoesNotSpin(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pops testutil.Spy
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Respond(204, ""))
	err := c.Queue("orders").Timeout(0).IdleTimeout(500*time.Millisecond).Each().
		Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
	require.NoError(t, err)
	assert.Less(t, len(pops.All()), 20, "an idle queue costs a few pops per second, not a busy loop")
}

// R137 "omits batch and partitions unless the user set them": what the user set is sent as
// set, Partitions(4) with the default Concurrency(1) included.
func TestConsumeSendsPartitionsAsSet_R137(t *testing.T) {
	t.Parallel()
	pops, _ := consumeOnce(t, func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Partitions(4) },
		pop20, func(context.Context, *queen.Message) error { return nil })
	assert.Equal(t, "4", queryOf(t, pops[0]).Get("partitions"))
}
