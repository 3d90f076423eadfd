package queen_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A second settle of the same message, by any of its methods or by Client.Ack, returns
// ErrAlreadySettled and sends nothing, whichever settle came first.
func TestASecondSettleSendsNothing(t *testing.T) {
	t.Parallel()
	settles := map[string]func(ctx context.Context, m *queen.Message) error{
		"Ack":        func(ctx context.Context, m *queen.Message) error { return m.Ack(ctx) },
		"Nack":       func(ctx context.Context, m *queen.Message) error { return m.Nack(ctx, errors.New("x")) },
		"Retry":      func(ctx context.Context, m *queen.Message) error { return m.Retry(ctx) },
		"DeadLetter": func(ctx context.Context, m *queen.Message) error { return m.DeadLetter(ctx, errors.New("x")) },
	}
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for first, f1 := range settles {
			t.Run(first, func(t *testing.T) {
				t.Parallel()
				_, tap, c := tapped(t, m, queentest.WithManualClock())
				push(t, c, "q", "", 1)
				msgs, err := c.Queue("q").Pop(testutil.Context(t))
				require.NoError(t, err)
				require.Len(t, msgs, 1)
				require.NoError(t, f1(testutil.Context(t), msgs[0]))
				n := len(sentAcks(tap))
				require.Equal(t, 1, n)
				for second, f2 := range settles {
					assert.ErrorIs(t, f2(testutil.Context(t), msgs[0]), queen.ErrAlreadySettled, "%s after %s", second, first)
				}
				_, err = c.Ack(testutil.Context(t), msgs[0], queen.StatusCompleted)
				assert.ErrorIs(t, err, queen.ErrAlreadySettled, "Client.Ack after %s", first)
				assert.Len(t, sentAcks(tap), 1, "a second settle sends nothing")
			})
		}
	})
}

// Ack, Nack, Retry and DeadLetter each send one ack with their status and reason.
func TestEachSettleSendsItsStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range settleMethods {
		t.Run(tc.status, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			m := popOne(t, c, mt, pop015Group, "g1")
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(200, ack015Completed))
			require.NoError(t, tc.settle(t.Context(), m))
			errField := ""
			if tc.err != "" {
				errField = `,"error":"` + tc.err + `"`
			}
			jsonEq(t, `{"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","status":"`+tc.status+`","consumerGroup":"g1"`+errField+`}`, rec.Only(t).Body)
		})
	}
}

// A settle whose request never got an answer leaves the message unsettled, so it can be retried.
func TestASettleThatGotNoAnswerLeavesTheMessageUnsettled(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t, queen.WithRetry(0, 1, 1))
	m := popOne(t, c, mt, pop015Group, "g1")
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection reset by peer")
	})
	require.Error(t, m.Ack(t.Context()))

	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, ack015Completed))
	require.NoError(t, m.Ack(t.Context()))
	rec.Only(t)
}

// A message no Client delivered cannot be settled.
func TestAMessageNoClientDeliveredIsRefused(t *testing.T) {
	t.Parallel()
	m := &queen.Message{TransactionID: "t", PartitionID: "p"}
	require.ErrorIs(t, m.Ack(t.Context()), queen.ErrInvalidOption)
}

// settleMethods are a message's four settles, with the status and error text each sends.
var settleMethods = []struct {
	name, status, err string
	settle            func(ctx context.Context, m *queen.Message) error
}{
	{"Ack", "completed", "", func(ctx context.Context, m *queen.Message) error { return m.Ack(ctx) }},
	{"Nack", "failed", "boom", func(ctx context.Context, m *queen.Message) error { return m.Nack(ctx, errors.New("boom")) }},
	{"Retry", "retry", "", func(ctx context.Context, m *queen.Message) error { return m.Retry(ctx) }},
	{"DeadLetter", "dlq", "poison", func(ctx context.Context, m *queen.Message) error {
		return m.DeadLetter(ctx, errors.New("poison"))
	}},
}
