package queen_test

// Pop's query under autopilot (R137), subscriptionFrom's encoding (O15), and Client.Ack as a
// settle (API.md, Message).

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
)

// R137: "when on, the SDK sends autopilot=true and omits batch and partitions unless the user
// set them". A Pop with Autopilot(true) and no Batch must not send batch=1.
func TestContractPopAutopilotOmitsBatch_R137(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec recorder
	mt.RegisterNoResponder(rec.respond(204, ""))
	_, err := c.Queue("orders").Autopilot(true).Pop(t.Context())
	require.NoError(t, err)
	q := queryOf(t, rec.only(t))
	assert.Equal(t, url.Values{"autopilot": {"true"}}, q)
}

// API.md: "A second settle of the same message returns ErrAlreadySettled and sends nothing";
// Client.Ack is a settle of its message like m.Ack.
func TestContractClientAckAfterSettleSendsNothing(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop20, "billing")
	var rec recorder
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`),
		rec.respond(200, `[{"index":0,"transactionId":"order-9137","success":true,"error":null}]`))
	require.NoError(t, m.Ack(t.Context()))
	_, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	assert.ErrorIs(t, err, queen.ErrAlreadySettled)
	rec.only(t)
}

// Ambiguous: O15 "formats timestamps as RFC 3339 and URL-encodes them (+ as
// %2B)". The SDK converts to UTC, so a "+" never appears; a tester giving a +01:00 time may look
// for %2B in the query.
func TestContractSubscriptionFromKeepsTheOffset_O15(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec recorder
	mt.RegisterNoResponder(rec.respond(204, ""))
	from := time.Date(2026, 11, 29, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	_, err := c.Queue("q").Group("g").SubscriptionFrom(from).Pop(t.Context())
	require.NoError(t, err)
	assert.Contains(t, rec.only(t).RawQuery, "subscriptionFrom=2026-11-29T21%3A00%3A00%2B01%3A00")
}
