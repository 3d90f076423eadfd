package queen_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// The integration tests run against the reference broker as 2.0 and as 0.15; where the two
// answer differently, the expectation is written per mode.

// modeClient starts a reference broker in mode m and a Client for it.
func modeClient(t *testing.T, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *queen.Client) {
	t.Helper()
	return brokerClient(t, m.Options(opts...)...)
}

// leaseOn015 gives the queue a leaseTime of seconds on 0.15, which ignores a pop's lease
// time and leases for the queue's (300 s for a queue a push creates).
func leaseOn015(t *testing.T, m testmode.Mode, c *queen.Client, queue string, seconds int) {
	t.Helper()
	if m.V015 {
		body := map[string]any{"queue": queue, "options": map[string]any{"leaseTime": seconds}}
		require.NoError(t, c.Do(t.Context(), http.MethodPost, "/api/v1/configure", nil, body, nil))
	}
}

// brokerClient starts a reference broker and a Client for it.
func brokerClient(t *testing.T, opts ...queentest.Option) (*queentest.Server, *queen.Client) {
	t.Helper()
	srv := queentest.NewServer(t, opts...)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := queen.New(srv.URL(), queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}),
		queen.WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

func pushN(t *testing.T, b queen.QueueBuilder, n int) []queen.PushResult {
	t.Helper()
	items := make([]queen.PushItem, n)
	for i := range items {
		items[i] = queen.PushItem{Data: map[string]int{"n": i}}
	}
	res, err := b.Push(t.Context(), items...)
	require.NoError(t, err)
	require.Len(t, res, n)
	return res
}

func TestIntegrationPushPopAck_R14_R40(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, testIntegrationPushPopAck)
}

func testIntegrationPushPopAck(t *testing.T, mode testmode.Mode) {
	_, c := modeClient(t, mode)
	q := c.Queue("orders").Partition("p1")
	pushed := pushN(t, q, 3)
	for i, r := range pushed {
		assert.Equal(t, "queued", r.Status)
		assert.Equal(t, mode.Offset(int64(i)), r.Offset)
	}

	msgs, err := q.Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		assert.Equal(t, mode.Offset(int64(i)), m.Offset)
		assert.Equal(t, mode.Attempt(1), m.DeliveryAttempt)
		assert.Equal(t, pushed[i].TransactionID, m.TransactionID)
		assert.Equal(t, "orders", m.Queue)
		assert.Equal(t, "p1", m.Partition)
		assert.NotEmpty(t, m.LeaseID)
		var v struct{ N int }
		require.NoError(t, m.Decode(&v))
		assert.Equal(t, i, v.N)
		require.NoError(t, m.Ack(t.Context()))
	}
	msgs, err = q.Pop(t.Context())
	require.NoError(t, err)
	assert.Empty(t, msgs)
}

func TestIntegrationEveryAckStatus_R67_R69_R71_R72(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status    queen.Status
		comesBack bool
		dlq       bool
	}{
		{queen.StatusCompleted, false, false},
		{queen.StatusFailed, true, false},
		{queen.StatusRetry, true, false},
		{queen.StatusDLQ, false, true},
	}
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		for _, tc := range cases {
			t.Run(string(tc.status), func(t *testing.T) {
				t.Parallel()
				_, c := modeClient(t, mode)
				q := c.Queue("jobs").Group("workers").SubscriptionMode(queen.SubscribeAll)
				pushN(t, q, 1)
				msgs, err := q.Pop(t.Context())
				require.NoError(t, err)
				require.Len(t, msgs, 1)

				res, err := c.Ack(t.Context(), msgs[0], tc.status, queen.WithError("why"))
				require.NoError(t, err)
				assert.True(t, res.Success)
				assert.Equal(t, tc.dlq, res.DLQ)

				again, err := q.Pop(t.Context())
				require.NoError(t, err)
				if !tc.comesBack {
					assert.Empty(t, again)
					return
				}
				require.Len(t, again, 1)
				assert.Equal(t, msgs[0].TransactionID, again[0].TransactionID)
				assert.Equal(t, mode.Attempt(2), again[0].DeliveryAttempt)
			})
		}
	})
}

func TestIntegrationBatchAckReleasesLease_R53_R85(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("batchy")
		pushN(t, q, 3)
		msgs, err := q.Batch(3).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 3)
		items := make([]queen.AckItem, len(msgs))
		for i, m := range msgs {
			items[i] = queen.AckItem{Message: m, Status: queen.StatusCompleted}
		}
		results, err := c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		require.Len(t, results, 3)
		for i, r := range results {
			assert.True(t, r.Success, "item %d", i)
			assert.Equal(t, msgs[i].TransactionID, r.TransactionID)
		}
		assert.True(t, results[2].LeaseReleased)

		// A second batch with the ended lease is refused item by item (R79).
		results, err = c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		for _, r := range results {
			assert.False(t, r.Success)
			assert.Equal(t, "Invalid or expired lease", r.Error)
		}
		assert.ErrorIs(t, msgs[0].Ack(t.Context()), queen.ErrAlreadySettled)
	})
}

func TestIntegrationRenewAndExpiry_R54_R61_R63(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeClient(t, mode, queentest.WithManualClock())
		q := c.Queue("leases")
		leaseOn015(t, mode, c, "leases", 5)
		pushN(t, q, 2)
		msgs, err := q.Batch(1).LeaseTime(10 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)

		exp, err := msgs[0].Renew(t.Context(), 60*time.Second)
		require.NoError(t, err)
		assert.WithinDuration(t, srv.Now().Add(60*time.Second), exp, time.Second)
		srv.Advance(30 * time.Second) // past the original 10s lease, within the renewal
		require.NoError(t, msgs[0].Ack(t.Context()))

		_, err = c.Renew(t.Context(), msgs[0].LeaseID, time.Minute)
		require.ErrorIs(t, err, queen.ErrLeaseExpired, "a released lease cannot be renewed")

		second, err := q.LeaseTime(5 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, second, 1)
		srv.Advance(6 * time.Second)
		err = second[0].Ack(t.Context())
		require.ErrorIs(t, err, queen.ErrLeaseExpired)
		_, err = second[0].Renew(t.Context(), time.Minute)
		require.ErrorIs(t, err, queen.ErrLeaseExpired)

		redelivered, err := q.Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, redelivered, 1)
		assert.Equal(t, mode.Attempt(2), redelivered[0].DeliveryAttempt)
	})
}

func TestIntegrationPushDedup_R6_R8(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("dedup")
		first, err := q.Push(t.Context(), queen.PushItem{Data: "a", TransactionID: "order-1"})
		require.NoError(t, err)
		again, err := q.Push(t.Context(),
			queen.PushItem{Data: "b", TransactionID: "order-1"},
			queen.PushItem{Data: "c", TransactionID: "order-2"},
			queen.PushItem{Data: "d", TransactionID: "order-2"})
		require.NoError(t, err)
		assert.Equal(t, "queued", first[0].Status)
		assert.Equal(t, []string{"duplicate", "queued", "duplicate"},
			[]string{again[0].Status, again[1].Status, again[2].Status})
		assert.Equal(t, first[0].MessageID, again[0].MessageID)
		assert.Equal(t, first[0].Offset, again[0].Offset)

		msgs, err := q.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		assert.JSONEq(t, `"a"`, string(msgs[0].Data))
	})
}

func TestIntegrationTransactionCommitAndRollback_R126_R127(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeClient(t, mode, queentest.WithManualClock())
		in := c.Queue("tx-in")
		leaseOn015(t, mode, c, "tx-in", 5)
		pushN(t, in, 2)
		msgs, err := in.Batch(1).LeaseTime(10 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)

		res, err := c.Transaction().
			Ack(msgs[0], queen.StatusCompleted).
			PushTo("tx-out", "p", queen.PushItem{Data: "made from 0"}).
			Commit(t.Context())
		require.NoError(t, err)
		require.Len(t, res.Results, 2)
		assert.Equal(t, "ack", res.Results[0].Type)
		assert.True(t, res.Results[0].Success)
		assert.Equal(t, "push", res.Results[1].Type)
		assert.Equal(t, "queued", res.Results[1].Status)
		assert.Equal(t, mode.Offset(0), res.Results[1].Offset)

		out, err := c.Queue("tx-out").Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, out, 1)
		assert.JSONEq(t, `"made from 0"`, string(out[0].Data))

		// The next message's lease expires before the transaction: everything rolls back.
		next, err := in.Batch(1).LeaseTime(5 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, next, 1)
		srv.Advance(6 * time.Second)
		_, err = c.Transaction().Ack(next[0], queen.StatusCompleted).Push("tx-out2", queen.PushItem{Data: 1}).Commit(t.Context())
		require.ErrorIs(t, err, queen.ErrTransactionFailed)
		assert.Contains(t, err.Error(), "Invalid or expired lease")
		none, err := c.Queue("tx-out2").Pop(t.Context())
		require.NoError(t, err)
		assert.Empty(t, none, "a rolled-back push stores nothing")
	})
}

func TestIntegrationSubscriptionModes_R103_R104(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("subs")
		pushN(t, q, 2)

		all, err := q.Group("history").SubscriptionMode(queen.SubscribeAll).Batch(10).Pop(t.Context())
		require.NoError(t, err)
		assert.Len(t, all, 2)

		newGroup := q.Group("fresh") // SubscribeNew by default
		none, err := newGroup.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		assert.Empty(t, none)
		pushN(t, q, 1)
		later, err := newGroup.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, later, 1)
		assert.Equal(t, mode.Offset(2), later[0].Offset)
	})
}

func TestIntegrationLongPollWakesOnPush_R24(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("wake")
		type popped struct {
			msgs []*queen.Message
			err  error
		}
		done := make(chan popped, 1)
		go func() {
			msgs, err := q.Wait(true).Timeout(30 * time.Second).Pop(t.Context())
			done <- popped{msgs, err}
		}()
		pushN(t, q, 1) // before or after the pop starts waiting, it must receive this
		got := <-done
		require.NoError(t, got.err)
		require.Len(t, got.msgs, 1)
	})
}

func TestIntegrationAuth_R132(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t, queentest.WithToken("right-token"))
		for _, tc := range []struct {
			token string
			ok    bool
		}{{"right-token", true}, {"wrong-token", false}} {
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			c, err := queen.New(srv.URL(), queen.WithToken(tc.token), queen.WithHTTPClient(&http.Client{Transport: tr}))
			require.NoError(t, err)
			_, err = c.Queue("secure").Push(t.Context(), queen.PushItem{Data: 1})
			if tc.ok {
				require.NoError(t, err)
			} else {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, 401, apiErr.StatusCode)
				assert.NotContains(t, err.Error(), tc.token)
			}
			require.NoError(t, c.Close())
		}
	})
}

func TestIntegrationMultiPartitionPopAndAck_R32_R88(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		for _, p := range []string{"a", "b", "c"} {
			pushN(t, c.Queue("multi").Partition(p), 2)
		}
		msgs, err := c.Queue("multi").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(10).Partitions(3).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 6)
		items := make([]queen.AckItem, len(msgs))
		parts := map[string]bool{}
		for i, m := range msgs {
			items[i] = queen.AckItem{Message: m}
			parts[m.PartitionID] = true
			assert.Equal(t, msgs[0].LeaseID, m.LeaseID, "one lease for every claimed partition")
		}
		assert.Len(t, parts, 3)
		results, err := c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		released := 0
		for _, r := range results {
			require.True(t, r.Success, fmt.Sprint(r))
			if r.LeaseReleased {
				released++
			}
		}
		assert.Equal(t, 3, released, "one release per partition")
		assert.False(t, errors.Is(err, queen.ErrLeaseExpired))
	})
}
