package queen_test

// Pop's query under autopilot (R137) and subscriptionFrom's encoding (O15).

import (
	"net/url"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// R137: "when on, the SDK sends autopilot=true and omits batch and partitions unless the user
// set them". A Pop with Autopilot(true) and no Batch must not send batch=1.
func TestPopAutopilotOmitsBatch_R137(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	_, err := c.Queue("orders").Autopilot(true).Pop(t.Context())
	require.NoError(t, err)
	q := queryOf(t, rec.Only(t))
	assert.Equal(t, url.Values{"autopilot": {"true"}}, q)
}

// Ambiguous: O15 "formats timestamps as RFC 3339 and URL-encodes them (+ as
// %2B)". The SDK converts to UTC, so a "+" never appears; a tester giving a +01:00 time may look
// for %2B in the query.
func TestSubscriptionFromKeepsTheOffset_O15(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	from := time.Date(2026, 11, 29, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	_, err := c.Queue("q").Group("g").SubscriptionFrom(from).Pop(t.Context())
	require.NoError(t, err)
	assert.Contains(t, rec.Only(t).RawQuery, "subscriptionFrom=2026-11-29T21%3A00%3A00%2B01%3A00")
}
