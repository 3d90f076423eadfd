package queen_test

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// A `new` group whose first pops find the queue empty still gets every message pushed after.
func TestANewGroupWhoseFirstPopsFoundNothingGetsWhatIsPushedNext(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("pop", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			push(t, c, "q", "", "before")
			g := c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeNew)
			msgs, err := g.Pop(testutil.Context(t))
			require.NoError(t, err)
			require.Empty(t, msgs, "a new group skips what was there")
			push(t, c, "q", "", 0, 1, 2, 3, 4)
			msgs, err = g.Batch(10).Pop(testutil.Context(t))
			require.NoError(t, err)
			assert.Len(t, msgs, 5)
		})
		t.Run("consume", func(t *testing.T) {
			t.Parallel()
			_, _, c := tapped(t, m)
			g := c.Queue("q2").Group("g")
			require.NoError(t, g.Timeout(10*time.Millisecond).IdleTimeout(20*time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil }))
			push(t, c, "q2", "", 0, 1, 2, 3, 4)
			var got []int
			require.NoError(t, g.Limit(5).Each().Consume(testutil.Context(t), func(_ context.Context, msg *queen.Message) error {
				var n int
				require.NoError(t, msg.Decode(&n))
				got = append(got, n)
				return nil
			}))
			assert.Equal(t, []int{0, 1, 2, 3, 4}, got)
		})
	})
}

// On the captured wire: a named group in mode new whose first pop a 0.15 broker answers
// empty (with a body, not a 204: it stores a start only once a pop claims a message) sends,
// from its next pop on, subscriptionFrom set to the
// answer's Date less a second, until a pop brings messages; then subscriptionMode=new again.
func TestANewGroupStartsAtTheBrokersTimeOfItsFirstPop(t *testing.T) {
	t.Parallel()
	empty := testutil.CaptureNamed(t, captures015, "pop", "long-poll on drained queue wait=true&timeout=2000").Response
	one := testutil.CaptureNamed(t, captures015, "pop", "queue mode pop, default batch (1)").Response
	const date = "Tue, 01 Dec 2026 10:00:05 GMT"
	ackAnswer := `[{"dlq":false,"error":null,"index":0,"leaseReleased":true,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"tx-basic-3"}]`

	c, mt := mockClient(t)
	var pops, acks testutil.Spy
	var n atomic.Int32
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Answer(func(req *http.Request) (*http.Response, error) {
		body := empty
		if n.Add(1) == 3 {
			body = one // the third pop claims a message: the start is stored
		}
		resp := httpmock.NewStringResponse(200, body)
		resp.Header.Set("Content-Type", "application/json")
		resp.Header.Set("Date", date)
		return resp, nil
	}))
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`), acks.Respond(200, ackAnswer))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := c.Queue("smoke-basic").Group("g-new").Wait(false).Each().
		Consume(ctx, func(context.Context, *queen.Message) error {
			cancel()
			return nil
		})
	require.NoError(t, err)
	sent := pops.All()
	require.GreaterOrEqual(t, len(sent), 3)
	first, second, third := queryOf(t, sent[0]), queryOf(t, sent[1]), queryOf(t, sent[2])
	assert.Equal(t, "new", first.Get("subscriptionMode"))
	assert.False(t, first.Has("subscriptionFrom"))
	answered, err := http.ParseTime(date)
	require.NoError(t, err)
	for _, q := range []url.Values{second, third} {
		from, err := time.Parse(time.RFC3339Nano, q.Get("subscriptionFrom"))
		require.NoError(t, err, "subscriptionFrom in %v", q)
		// The answer's Date, less the time the pop took and a second of the Date's precision.
		assert.False(t, from.After(answered.Add(-time.Second)), from)
		assert.True(t, from.After(answered.Add(-2*time.Second)), from)
		assert.False(t, q.Has("subscriptionMode"))
	}
	assert.Equal(t, second.Get("subscriptionFrom"), third.Get("subscriptionFrom"), "the first pop's time, kept")
	if len(sent) > 3 {
		fourth := queryOf(t, sent[3])
		assert.Equal(t, "new", fourth.Get("subscriptionMode"), "once a pop claimed messages the start is stored")
		assert.False(t, fourth.Has("subscriptionFrom"))
	}
}
