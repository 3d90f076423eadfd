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
