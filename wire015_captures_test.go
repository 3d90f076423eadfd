package queen_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

// capture is one exchange of wire-0.15.md, kept verbatim in testdata (pop, push, ack, extend
// and transaction answers of a real 0.15 broker).
type capture struct {
	Title    string `json:"title"`
	Kind     string `json:"kind"`
	Method   string `json:"method"`
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Request  string `json:"request"`
	Response string `json:"response"`
}

func loadCaptures(t *testing.T, kind string) []capture {
	t.Helper()
	raw, err := os.ReadFile("testdata/wire015_captures.json")
	require.NoError(t, err)
	var all []capture
	require.NoError(t, json.Unmarshal(raw, &all))
	var out []capture
	for _, c := range all {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// O2, O3, O5: every 0.15 pop answer of the transcript decodes: messages field by field as the
// broker sent them, "nothing to deliver" as an empty slice.
func TestWire015EveryPopCapture_O2_O5(t *testing.T) {
	t.Parallel()
	for _, cp := range loadCaptures(t, "pop") {
		t.Run(cp.Title, func(t *testing.T) {
			t.Parallel()
			var want struct {
				LeaseID  *string `json:"leaseId"`
				Queue    string  `json:"queue"`
				Messages []struct {
					ID, TransactionID, PartitionID, Partition, ConsumerGroup, CreatedAt string
					LeaseID                                                             string `json:"leaseId"`
					TraceID                                                             *string
					Data                                                                json.RawMessage
				} `json:"messages"`
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))

			msgs, err := c.Queue("q").Pop(t.Context())
			require.NoError(t, err)
			require.NotNil(t, msgs)
			require.Len(t, msgs, len(want.Messages))
			for i, w := range want.Messages {
				m := msgs[i]
				assert.Equal(t, w.ID, m.ID)
				assert.Equal(t, w.TransactionID, m.TransactionID)
				assert.Equal(t, w.PartitionID, m.PartitionID)
				assert.Equal(t, w.Partition, m.Partition)
				assert.Equal(t, w.ConsumerGroup, m.ConsumerGroup)
				assert.Equal(t, w.LeaseID, m.LeaseID)
				assert.Equal(t, want.Queue, m.Queue)
				if w.TraceID != nil {
					assert.Equal(t, *w.TraceID, m.TraceID)
				} else {
					assert.Empty(t, m.TraceID)
				}
				assert.JSONEq(t, string(w.Data), string(m.Data))
				created, err := time.Parse(time.RFC3339Nano, w.CreatedAt)
				require.NoError(t, err)
				assert.True(t, created.Equal(m.CreatedAt), "createdAt %s", w.CreatedAt)
				assert.Equal(t, int64(-1), m.Offset, "O5: unknown offset")
				assert.Zero(t, m.DeliveryAttempt, "O5: unknown deliveryAttempt")
			}
		})
	}
}

// O1, O3, O19, O20: every 0.15 ack answer: arrays matched to the items by position, a 200
// object and a 400 as *APIError.
func TestWire015EveryAckCapture_O3_O20(t *testing.T) {
	t.Parallel()
	for _, cp := range loadCaptures(t, "ack") {
		t.Run(cp.Title, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			var want []struct {
				Success, DLQ, LeaseReleased bool
				Error                       *string
			}
			isArray := strings.HasPrefix(cp.Response, "[")
			n := 1
			if isArray {
				require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
				n = len(want)
			}
			items := make([]queen.AckItem, n)
			for i := range items {
				items[i] = queen.AckItem{Message: &queen.Message{TransactionID: "t", PartitionID: "p"}, Status: queen.StatusCompleted}
			}
			res, err := c.AckBatch(t.Context(), items)
			if !isArray {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				var body struct{ Error string }
				require.NoError(t, json.Unmarshal([]byte(cp.Response), &body))
				assert.Equal(t, body.Error, apiErr.Message)
				return
			}
			require.NoError(t, err, "refusals are per item")
			require.Len(t, res, n)
			for i, w := range want {
				assert.Equal(t, w.Success, res[i].Success)
				assert.Equal(t, w.DLQ, res[i].DLQ)
				assert.Equal(t, w.LeaseReleased, res[i].LeaseReleased)
				if w.Error != nil {
					assert.Equal(t, *w.Error, res[i].Error)
				}
				if !w.Success {
					assert.NotEmpty(t, res[i].Error, "a refusal always says why")
				}
			}
		})
	}
}

// O22: every 0.15 extend answer: the new expiry, or a refusal as ErrLeaseExpired, or a 400.
func TestWire015EveryExtendCapture_O22(t *testing.T) {
	t.Parallel()
	for _, cp := range loadCaptures(t, "extend") {
		t.Run(cp.Title, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			at, err := c.Renew(t.Context(), "01a22945-dbbd-7000-ae31-34cbc1c0d5de", time.Minute)
			if cp.Status != 200 {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				return
			}
			var want []struct {
				Success   bool
				ExpiresAt *time.Time
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			if !want[0].Success {
				require.ErrorIs(t, err, queen.ErrLeaseExpired)
				return
			}
			require.NoError(t, err)
			assert.True(t, want[0].ExpiresAt.Equal(at))
			jsonEq(t, `{"seconds":60}`, rec.Only(t).Body)
		})
	}
}

// O7: every 0.15 push answer: results by position (no offset: -1), a 400 as *APIError.
func TestWire015EveryPushCapture_O7(t *testing.T) {
	t.Parallel()
	for _, cp := range loadCaptures(t, "push") {
		var req struct{ Items []json.RawMessage }
		if json.Unmarshal([]byte(cp.Request), &req) != nil || len(req.Items) == 0 {
			continue // no items, or not JSON: a request the SDK never sends
		}
		t.Run(cp.Title, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			items := make([]queen.PushItem, len(req.Items))
			for i := range items {
				items[i] = queen.PushItem{Data: i}
			}
			res, err := c.Queue("q").Push(t.Context(), items...)
			if cp.Status >= 400 {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				return
			}
			require.NoError(t, err)
			var want []struct {
				TransactionID string `json:"transaction_id"`
				MessageID     string `json:"message_id"`
				PartitionID   string `json:"partition_id"`
				Status        string
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			require.Len(t, res, len(want))
			for i, w := range want {
				assert.Equal(t, queen.PushResult{TransactionID: w.TransactionID, MessageID: w.MessageID,
					PartitionID: w.PartitionID, Status: w.Status, Offset: -1}, res[i])
			}
		})
	}
}

// H1: a 0.15 transaction answer (no status on push entries, no offset).
func TestWire015TransactionCapture_H1(t *testing.T) {
	t.Parallel()
	cp := loadCaptures(t, "tx")[0]
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
	res, err := c.Transaction().PushTo("smoke-tx", "p1", queen.PushItem{Data: map[string]int{"t": 1}}).Commit(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "8d2beb09-165f-46c8-9a61-61999ee3efbc", res.TransactionID)
	require.Len(t, res.Results, 1)
	e := res.Results[0]
	assert.Equal(t, "push", e.Type)
	assert.True(t, e.Success)
	assert.Equal(t, "01a22946-4d75-7000-8042-7c43b18c20a8", e.MessageID)
	assert.Equal(t, "a668d092-60f3-407b-9550-b5a6e2fa45b5", e.PartitionID)
	assert.Equal(t, "ba0d472a-cd54-493c-a577-43d5d7174b6d", e.TransactionID)
	assert.Equal(t, int64(-1), e.Offset)
	assert.False(t, errors.Is(err, queen.ErrTransactionFailed))
}
