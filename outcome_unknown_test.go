package queen_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// answerFault is what lossyBroker does to the first matching requests.
type answerFault int

const (
	applyThenDrop answerFault = iota // the broker applies the request, then the connection drops
	applyThenHang                    // the broker applies it, then the answer never comes (a timeout)
	refuseWith503                    // the broker answers 503 without applying it
	applyThen504                     // the broker applies it, then a proxy answers 504
)

// lossyBroker serves srv over HTTP, doing fault to the first times requests to path.
func lossyBroker(t *testing.T, srv *queentest.Server, path string, fault answerFault, times int32) string {
	t.Helper()
	var left atomic.Int32
	left.Store(times)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || left.Add(-1) < 0 {
			srv.Handler().ServeHTTP(w, r)
			return
		}
		switch fault {
		case refuseWith503:
			writeJSON(w, http.StatusServiceUnavailable, `{"error":"busy"}`)
			return
		case applyThen504:
			srv.Handler().ServeHTTP(httptest.NewRecorder(), r)
			writeJSON(w, http.StatusGatewayTimeout, `{"error":"upstream timed out"}`)
			return
		case applyThenHang:
			srv.Handler().ServeHTTP(httptest.NewRecorder(), r)
			<-r.Context().Done() // the client gives up
			return
		}
		srv.Handler().ServeHTTP(httptest.NewRecorder(), r)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// leaseOne pushes one message to queue and pops it through c.
func leaseOne(t *testing.T, c *queen.Client, queue string) *queen.Message {
	t.Helper()
	_, err := c.Queue(queue).Push(t.Context(), queen.PushItem{Data: map[string]int{"n": 1}})
	require.NoError(t, err)
	msgs, err := c.Queue(queue).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	return msgs[0]
}

// The broker applied the transaction but its answer was lost: the resend is rolled back (its
// ack finds the lease ended), and Commit says the outcome is unknown, never that it failed.
func TestTransactionLostAnswerIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := lossyBroker(t, srv, "/api/v1/transaction", applyThenDrop, 1)
	c := stubClient(t, url)
	m := leaseOne(t, c, "orders")

	_, err := c.Transaction().Ack(m, queen.StatusCompleted).
		Push("invoices", queen.PushItem{Data: "inv-1"}).Commit(t.Context())
	require.Error(t, err)
	assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, queen.ErrTransactionFailed)
	assert.Contains(t, err.Error(), "Invalid or expired lease", "the resend's answer is kept")

	// It was applied: the invoice is there and the order is done.
	got, err := c.Queue("invoices").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	assert.Len(t, got, 1)
	again, err := c.Queue("orders").Pop(t.Context())
	require.NoError(t, err)
	assert.Empty(t, again)
}

// A timeout after the request was sent is a lost answer too.
func TestTransactionTimeoutIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := lossyBroker(t, srv, "/api/v1/transaction", applyThenHang, 1)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := queen.New(url, queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 300 * time.Millisecond}),
		queen.WithRetry(2, time.Millisecond, 2*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	m := leaseOne(t, c, "orders")

	_, err = c.Transaction().Ack(m, queen.StatusCompleted).Commit(t.Context())
	assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, queen.ErrTransactionFailed)
}

// A 5xx means the broker did not apply the transaction: it is retried, and the retry commits.
func TestTransaction503BeforeApplyIsRetried(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := lossyBroker(t, srv, "/api/v1/transaction", refuseWith503, 1)
	c := stubClient(t, url)
	m := leaseOne(t, c, "orders")

	res, err := c.Transaction().Ack(m, queen.StatusCompleted).Commit(t.Context())
	require.NoError(t, err)
	require.Len(t, res.Results, 1)
	assert.True(t, res.Results[0].Success)
}

// A real rollback, with every answer delivered, is still ErrTransactionFailed.
func TestTransactionRollbackIsNotOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	c := stubClient(t, srv.URL())
	_, err := c.Queue("orders").Push(t.Context(), queen.PushItem{Data: 1}, queen.PushItem{Data: 2})
	require.NoError(t, err)
	msgs, err := c.Queue("orders").Batch(2).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.NoError(t, msgs[1].Ack(t.Context())) // ends the lease of the whole batch
	_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Commit(t.Context())
	assert.ErrorIs(t, err, queen.ErrTransactionFailed)
	assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown)
}

// An ack applied whose answer was lost: the resend is refused, and that is not a failure.
func TestAckLostAnswerIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := lossyBroker(t, srv, "/api/v1/ack", applyThenDrop, 1)
	c := stubClient(t, url)
	m := leaseOne(t, c, "orders")

	err := m.Ack(t.Context())
	assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, queen.ErrLeaseExpired)
	again, err := c.Queue("orders").Pop(t.Context())
	require.NoError(t, err)
	assert.Empty(t, again, "the first ack was applied")
}

// A batch ack whose first answer was lost and whose resend applied every item is a success.
func TestAckBatchLostAnswerThenAppliedIsSuccess(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	// A queue-mode ack without a lease is answered success:true again (the cursor is past it).
	url := lossyBroker(t, srv, "/api/v1/ack/batch", applyThenDrop, 1)
	c := stubClient(t, url)
	_, err := c.Queue("orders").Push(t.Context(), queen.PushItem{Data: 1})
	require.NoError(t, err)
	msgs, err := c.Queue("orders").AutoAck(true).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	res, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: msgs[0]}})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.True(t, res[0].Success)
}

// A batch ack applied whose answer was lost: the results of the resend come back with an
// error wrapping ErrOutcomeUnknown.
func TestAckBatchLostAnswerRefusedIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	url := lossyBroker(t, srv, "/api/v1/ack/batch", applyThenDrop, 1)
	c := stubClient(t, url)
	m := leaseOne(t, c, "orders")
	res, err := c.AckBatch(t.Context(), []queen.AckItem{{Message: m, Status: queen.StatusRetry}})
	assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	require.Len(t, res, 1)
	assert.False(t, res[0].Success)
}

// A replay applied whose answer was lost: the resend finds no dead letter.
func TestReplayLostAnswerIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	direct := stubClient(t, srv.URL())
	m := leaseOne(t, direct, "orders")
	require.NoError(t, m.DeadLetter(t.Context(), errors.New("bad")))
	page, err := admin.New(direct).DeadLetters(t.Context(), admin.DLQQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, page.DeadLetters, 1)
	id := page.DeadLetters[0].ID

	url := lossyBroker(t, srv, "/api/v1/dlq/"+id+"/replay", applyThenDrop, 1)
	_, err = admin.New(stubClient(t, url)).ReplayDeadLetter(t.Context(), id)
	assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr, "the resend's answer is wrapped")
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)

	replayed, err := direct.Queue("orders").Pop(t.Context())
	require.NoError(t, err)
	assert.Len(t, replayed, 1, "the first replay was applied")
}

// A call that never reached the broker (nothing listens) is not an unknown outcome.
func TestAckNeverSentIsNotOutcomeUnknown(t *testing.T) {
	t.Parallel()
	c := stubClient(t, testutil.RefusedURL, queen.WithRetry(1, time.Millisecond, time.Millisecond))
	m := &queen.Message{TransactionID: "t", PartitionID: "p", LeaseID: "l"}
	_, err := c.Ack(context.Background(), m, queen.StatusCompleted)
	require.Error(t, err)
	assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown)
}

// Every way a transaction's answer can be lost after the broker applied it: Commit says the
// outcome is unknown, never that the transaction failed, and it was applied once.
func TestTransactionAppliedAnswerLostIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		fault   answerFault
		retries int
		broker  *queentest.Fault // instead of fault: the broker's own fault injection
	}{
		"dropped, no retry":           {fault: applyThenDrop},
		"proxy 504, then resent":      {fault: applyThen504, retries: 3},
		"broker drops its answer":     {broker: &queentest.Fault{Route: "transaction", After: true}, retries: 3},
		"broker answers 503 after it": {broker: &queentest.Fault{Route: "transaction", After: true, Status: 503}, retries: 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t)
			url := srv.URL()
			if tc.broker == nil {
				url = lossyBroker(t, srv, "/api/v1/transaction", tc.fault, 1)
			}
			c := stubClient(t, url, queen.WithRetry(tc.retries, time.Millisecond, time.Millisecond))
			m := leaseOne(t, c, "orders")
			if tc.broker != nil {
				srv.Fail(*tc.broker)
			}

			_, err := c.Transaction().Ack(m, queen.StatusCompleted).Push("invoices", queen.PushItem{Data: 1}).Commit(t.Context())
			assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
			assert.NotErrorIs(t, err, queen.ErrTransactionFailed)
			got, err := c.Queue("invoices").Batch(10).Pop(t.Context())
			require.NoError(t, err)
			assert.Len(t, got, 1, "applied once")
		})
	}
}

// A transaction the broker applied and then answered 503 (a proxy failing after the broker
// committed) is never reported rolled back, on either broker: Commit succeeds once a resend
// finds it applied, or says the outcome is unknown.
func TestATransactionAnswered503AfterItWasAppliedIsNeverReportedRolledBack(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "in", "", 1)
		msgs, err := c.Queue("in").Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		srv.Fail(queentest.Fault{Route: "transaction", After: true, Status: 503})
		_, err = c.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("out", queen.PushItem{Data: 2}).Commit(testutil.Context(t))
		assert.NotErrorIs(t, err, queen.ErrTransactionFailed, "a transaction that may have been applied is not reported rolled back")
		if err == nil {
			return // a retry found it applied and said so: fine
		}
		assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
	})
}

// A call whose ctx is done before it is sent was never applied: its error is ctx's, never an
// unknown outcome, and nothing reaches the broker.
func TestACallNeverSentIsNotOutcomeUnknown(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	spy, url := testutil.NewSpy(t, srv.Handler())
	c := stubClient(t, url)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := &queen.Message{TransactionID: "t", PartitionID: "p", LeaseID: "l"}
	for name, call := range map[string]func() error{
		"push": func() error { _, err := c.Queue("q").Push(ctx, queen.PushItem{Data: 1}); return err },
		"ack":  func() error { _, err := c.Ack(ctx, m, queen.StatusCompleted); return err },
		"renew": func() error {
			_, err := c.Renew(ctx, "00000000-0000-0000-0000-000000000000", time.Minute)
			return err
		},
		"transaction": func() error {
			_, err := c.Transaction().Push("q", queen.PushItem{Data: 1}).Commit(ctx)
			return err
		},
	} {
		err := call()
		require.ErrorIs(t, err, context.Canceled, name)
		assert.NotErrorIs(t, err, queen.ErrOutcomeUnknown, name)
	}
	assert.Empty(t, spy.All(), "nothing was sent")
}

// A renewal whose answer was lost may have extended the lease: with retries off its error
// says the outcome is unknown; with retries on, the resend's answer settles it.
func TestARenewalWhoseAnswerWasLostIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for name, retries := range map[string]int{"retries off": 0, "retries on": 2} {
			srv := queentest.NewServer(t, m.Options(queentest.WithManualClock())...)
			c := stubClient(t, srv.URL(), queen.WithRetry(retries, time.Millisecond, time.Millisecond))
			leaseOn015(t, m, c, "leases", 30)
			msg := leaseOne(t, c, "leases")
			srv.Fail(queentest.Fault{Route: "extend", After: true})
			_, err := msg.Renew(testutil.Context(t), time.Minute)
			if retries == 0 {
				require.ErrorIs(t, err, queen.ErrOutcomeUnknown, name)
				assert.NotErrorIs(t, err, queen.ErrLeaseExpired, name)
			} else {
				require.NoError(t, err, name)
			}
			srv.Advance(45 * time.Second) // past the first lease, within the renewal
			require.NoError(t, msg.Ack(testutil.Context(t)), "%s: the lease was extended", name)
		}
	})
}
