package queen_test

import (
	"context"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
)

// O28 on the captured wire: a 0.15 broker answers a default Consume pop (autopilot, no batch)
// with one message and no offset; the loop's next pop carries a batch it sized itself.
func TestConsumeSizesBatchFromA015Answer_O28(t *testing.T) {
	t.Parallel()
	var single capture
	for _, c := range loadCaptures(t, "pop") {
		if c.Title == "A11c queue mode pop, default batch (1)" {
			single = c
		}
	}
	require.NotEmpty(t, single.Response, "capture A11c")
	ackAnswer := `[{"dlq":false,"error":null,"index":0,"leaseReleased":true,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"tx-basic-3"}]`

	c, mt := mockClient(t)
	var pops, acks recorder
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.respond(single.Status, single.Response))
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`), acks.respond(200, ackAnswer))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int32
	err := c.Queue("smoke-basic").Each().Consume(ctx, func(context.Context, *queen.Message) error {
		if calls.Add(1) == 2 {
			cancel()
		}
		return nil
	})
	require.NoError(t, err)
	sent := pops.all()
	require.GreaterOrEqual(t, len(sent), 2)
	first, second := queryOf(t, sent[0]), queryOf(t, sent[1])
	assert.Equal(t, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}, first,
		"the first pop leaves the batch to autopilot")
	batch, err := strconv.Atoi(second.Get("batch"))
	require.NoError(t, err, "the second pop sizes the batch: %v", second)
	assert.GreaterOrEqual(t, batch, 100)
	assert.LessOrEqual(t, batch, 1000)
	assert.Equal(t, "true", second.Get("autopilot"), "autopilot is still asked for")
}
