package queen_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// IdleTimeout ends Consume with the default long-poll length too: the poll does not outlast it.
func TestAcceptanceIdleTimeoutWithDefaultPoll(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		ctx, cancel := context.WithTimeout(testutil.Context(t), 10*time.Second)
		defer cancel()
		err := c.Queue("q").IdleTimeout(30*time.Millisecond).Each().
			Consume(ctx, func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		assert.NoError(t, ctx.Err(), "IdleTimeout, not the test's deadline, ended Consume")
	})
}

// A waiting Pop returns an empty answer after its Timeout; a push wakes it.
func TestAcceptancePopWait(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		msgs, err := c.Queue("q").Wait(true).Timeout(20 * time.Millisecond).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Empty(t, msgs)
		got := make(chan []*queen.Message, 1)
		go func() {
			msgs, _ := c.Queue("q").Wait(true).Timeout(10 * time.Second).Pop(testutil.Context(t))
			got <- msgs
		}()
		push(t, c, "q", "", 1)
		assert.Len(t, testutil.Recv(t, got, "the waiting pop"), 1)
	})
}

// Consume with an already-ended ctx returns nil; on a closed client it sends nothing.
func TestAcceptanceConsumeEndedCtx(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[0])
	ctx, cancel := context.WithCancel(testutil.Context(t))
	cancel()
	err := c.Queue("q").Each().Consume(ctx, func(context.Context, *queen.Message) error { return nil })
	assert.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.Queue("q").Pop(testutil.Context(t))
	assert.ErrorIs(t, err, queen.ErrClosed)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
	assert.ErrorIs(t, err, queen.ErrClosed)
	assert.Zero(t, tap.Containing("/pop")+tap.Containing("/push"))
}

// Send blocks while MaxBuffered items are unanswered, and returns ctx's error if it ends first.
func TestAcceptanceProducerSendBlocksWhenFull(t *testing.T) {
	t.Parallel()
	srv, _, c := tapped(t, testmode.Modes[0])
	srv.Fail(queentest.Fault{Route: "push", Delay: 300 * time.Millisecond})
	p, err := c.NewProducer(queen.ProducerConfig{MaxBuffered: 1, Linger: time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, p.Send(testutil.Context(t), "q", queen.PushItem{Data: 1}))
	ctx, cancel := context.WithTimeout(testutil.Context(t), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, p.Send(ctx, "q", queen.PushItem{Data: 2}), context.DeadlineExceeded)
	require.NoError(t, p.Close(testutil.Context(t)))
	msgs, err := c.Queue("q").Batch(10).Pop(testutil.Context(t))
	require.NoError(t, err)
	assert.Len(t, msgs, 1, "only the accepted item is stored")
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

// A Producer request whose answer was lost is resent and stored once.
func TestAcceptanceProducerResendIsDeduplicated(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		srv.Fail(queentest.Fault{Route: "push", After: true})
		log := newResultLog()
		p, err := c.NewProducer(queen.ProducerConfig{OnResult: log.onResult})
		require.NoError(t, err)
		require.NoError(t, p.Send(testutil.Context(t), "q", queen.PushItem{Data: 1}))
		require.NoError(t, p.Flush(testutil.Context(t)))
		require.NoError(t, p.Close(testutil.Context(t)))
		msgs, err := c.Queue("q").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, msgs, 1)
		log.mu.Lock()
		defer log.mu.Unlock()
		for _, errs := range log.got {
			if assert.Len(t, errs, 1) {
				assert.NoError(t, errs[0], "the resend's answer settles it")
			}
		}
		assert.Len(t, log.got, 1)
	})
}

// A push whose answer was lost is resent under the same transactionId and stored once.
func TestAcceptancePushResendIsDeduplicated(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		srv.Fail(queentest.Fault{Route: "push", After: true})
		res, err := c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
		require.NoError(t, err)
		require.Len(t, res, 1)
		assert.NotEmpty(t, res[0].TransactionID)
		msgs, err := c.Queue("q").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		assert.Equal(t, res[0].TransactionID, msgs[0].TransactionID)
	})
}

// SubscriptionFrom(t) starts a new group at the messages pushed at or after t.
func TestAcceptanceSubscriptionFrom(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", "old")
		srv.Advance(time.Minute)
		from := srv.Now().Add(-time.Second)
		push(t, c, "q", "", "new")
		msgs, err := c.Queue("q").Group("g").SubscriptionFrom(from).Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		var s string
		require.NoError(t, msgs[0].Decode(&s))
		assert.Equal(t, "new", s)
	})
}
