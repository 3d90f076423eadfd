package queen

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

func BenchmarkEncodeAckBatch(b *testing.B) {
	items := ackItems()
	testutil.CPULoop(b, func() {
		if body, err := encodeAckBatch(items); err != nil || len(body) == 0 {
			b.Fatal(err)
		}
	})
}

func BenchmarkDecodeAckResults(b *testing.B) {
	req := &request{method: http.MethodPost, path: "/api/v1/ack/batch"}
	items := ackItems()
	b.SetBytes(int64(len(ackAnswer100)))
	testutil.CPULoop(b, func() {
		results, err := ackResults(ackAnswer100, req, items)
		if err != nil || len(results) != 100 || !results[99].LeaseReleased {
			b.Fatal(err)
		}
	})
}

// ackItems are 100 messages of one partition and group, as a pop leases them.
func ackItems() []AckItem {
	items := make([]AckItem, 100)
	for i := range items {
		items[i] = AckItem{Status: StatusCompleted, Message: &Message{
			TransactionID: fmt.Sprintf("01a2315b-2269-74c8-897e-ed8c51f1%04d", i),
			PartitionID:   "99fee5aa-5753-422b-be1c-ed7420de2cb2", LeaseID: "f5ba7391-6469-4851-b87a-0ea9404f65a7",
			ConsumerGroup: "billing"}}
	}
	return items
}

// ackAnswer100 is the reference broker's answer to a batch ack of 100 items.
var ackAnswer100 = func() []byte {
	var s strings.Builder
	s.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			s.WriteByte(',')
		}
		fmt.Fprintf(&s, `{"index":%d,"transactionId":"01a2315b-2269-74c8-897e-ed8c51f1%04d","success":true,"error":null,"queueName":"orders","partitionName":"eu-west","leaseReleased":%t,"dlq":false}`, i, i, i == 99)
	}
	s.WriteByte(']')
	return []byte(s.String())
}()

// An ack answer of any bytes, for any number of items, never panics the decoder. An answer it
// accepts gives one result per item, in the items' order, each with the item's transactionId,
// and a refusal always with a reason; one it refuses is an *APIError.
func FuzzAckResults(f *testing.F) {
	seedAnswers(f, "ack",
		`[{"index":0,"transactionId":"t1","success":true,"error":null,"queueName":"orders","partitionName":"4","leaseReleased":false,"dlq":false}]`,
		`[{"index":0,"success":false,"error":null}]`)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, n := range []int{1, 3} {
			items := make([]AckItem, n)
			for i := range items {
				items[i] = AckItem{Message: &Message{TransactionID: fmt.Sprintf("t%d", i), PartitionID: "p"}}
			}
			results, err := ackResults(body, answerRequest(route.AckBatch), items)
			if err != nil {
				requireAPIError(t, err)
				continue
			}
			require.Len(t, results, n)
			for i, r := range results {
				assert.Equal(t, items[i].Message.TransactionID, r.TransactionID, "matched by position")
				if !r.Success {
					assert.NotEmpty(t, r.Error, "a refusal says why")
				}
			}
		}
	})
}

// An ack's body is written by hand for speed, so it must be the very bytes the wire codec
// writes for the same request: member order, omitted empty members, the group said once when
// every item shares it, escapes, and invalid UTF-8 replaced.
func TestAckBodiesAreWhatTheWireCodecWrites(t *testing.T) {
	texts := []string{"", "t-1", `quote " back \ slash`, "<html> & \u2028 \x01 tab\t", "bad \xff utf-8", "ünï"}
	groups := []string{"", queueModeGroup, "g1", "g \"2\""}
	for i := range 400 {
		pick := func(xs []string, k int) string { return xs[(i*7+k*13+i/len(xs))%len(xs)] }
		var items []AckItem
		for k := range 1 + i%4 {
			m := &Message{TransactionID: "tx" + pick(texts, k), PartitionID: "p" + pick(texts, k+1),
				LeaseID: pick(texts, k+2), ConsumerGroup: pick(groups, k+i/97)}
			items = append(items, AckItem{Message: m, Status: []Status{"", StatusFailed, StatusDLQ}[(i+k)%3],
				Error: pick(texts, k+3)})
		}
		want := wire.AckBatchRequest{}
		group, uniform := groupOf(items[0].Message), true
		for _, it := range items {
			want.Acknowledgments = append(want.Acknowledgments, newAckRequest(it.Message, it.Status, it.Error))
			uniform = uniform && groupOf(it.Message) == group
		}
		if uniform {
			want.ConsumerGroup = group
			for j := range want.Acknowledgments {
				want.Acknowledgments[j].ConsumerGroup = ""
			}
		}
		wantBody, err := wire.Marshal(&want)
		require.NoError(t, err)
		got, err := encodeAckBatch(items)
		require.NoError(t, err)
		require.Equal(t, string(wantBody), string(got), "batch ack %d", i)

		one := newAckRequest(items[0].Message, items[0].Status, items[0].Error)
		wantOne, err := wire.Marshal(&one)
		require.NoError(t, err)
		require.Equal(t, string(wantOne), string(appendAckRequest(nil, &one)), "single ack %d", i)
	}
}

// The ack answer is read member by member for speed, so it must read what the wire codec reads:
// the same outcomes from any answer, and an error wherever the codec has one.
func FuzzReadAckOutcomes(f *testing.F) {
	seedAnswers(f, "ack", string(ackAnswer100),
		`[{"success":true,"success":false,"error":"a","error":null,"leaseReleased":null,"dlq":true,"x":[1,{"y":2}]}]`,
		`[{"error":"\ud800 \u00e9 `+"\xff"+`"},null,{}]`, `[{"success":1}]`, `[{"error":7}]`, `[1]`, `[{"dlq":"true"}]`,
		`[{"success":true}] x`, `[{"success":true},]`, `[{"Success":true,"DLQ":true}]`, ` [ ] `, `[{"error":"x"}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := readAckOutcomes(body, nil)
		var want []wire.AckOutcome
		wantErr := wire.Unmarshal(body, &want)
		if wantErr != nil {
			require.Error(t, err, "the codec refuses %q: %v", body, wantErr)
			return
		}
		require.NoError(t, err, "the codec reads %q", body)
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, want[i], got[i], "result %d of %q", i, body)
		}
	})
}

// The ack answer reader reads, by name, the cases a reader most easily gets wrong: nulls,
// repeated members, escapes, skipped members, and the answers it must refuse.
func TestReadingAckOutcomesLikeTheCodec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want []wire.AckOutcome
	}{
		{`null`, nil},
		{`[]`, nil},
		{`[null,{"success":true,"leaseReleased":true,"index":3,"queueName":null}]`, []wire.AckOutcome{{}, {Success: true, LeaseReleased: true}}},
		{`[{"success":false,"error":"lease \u0065xpired","dlq":true}]`, []wire.AckOutcome{{Error: new("lease expired"), DLQ: true}}},
		{`[{"error":"a","error":null,"success":true,"success":null}]`, []wire.AckOutcome{{}}},
	} {
		got, err := readAckOutcomes([]byte(tc.body), nil)
		require.NoError(t, err, tc.body)
		assert.Equal(t, tc.want, got, tc.body)
	}
	for _, body := range []string{``, `{}`, `"x"`, `[1]`, `[{"success":"yes"}]`, `[{"error":7}]`, `[] []`, `[{"dlq":true}`} {
		_, err := readAckOutcomes([]byte(body), nil)
		assert.Error(t, err, "%q", body)
	}
}
