package queen

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// Benchmarks of the SDK's hottest bodies: a pop answer of 100 messages (captured from the
// reference broker), a batch ack of 100 items and its answer. The encoding/json run decodes
// the same pop answer into plain structs, a reference measured in the same run. Each reports
// cpu-ns/op, the process's CPU time per operation, which other processes on a busy machine
// disturb less than the wall time of ns/op.
//
//	go test -run '^$' -bench '^Benchmark(Decode|Encode)' -count 5 .

func loadPopAnswer(b *testing.B) []byte {
	body, err := os.ReadFile("testdata/pop_answer_100.json")
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecodePop(b *testing.B) {
	body := loadPopAnswer(b)
	b.SetBytes(int64(len(body)))
	testutil.CPULoop(b, func() {
		msgs, err := decodePop(body, "/p", "r")
		if err != nil || len(msgs) != 100 {
			b.Fatal(len(msgs), err)
		}
	})
}

func BenchmarkDecodePopEncodingJSON(b *testing.B) {
	body := loadPopAnswer(b)
	b.SetBytes(int64(len(body)))
	type message struct {
		ID, TransactionID, CreatedAt, PartitionID, Partition, LeaseID, ConsumerGroup string
		TraceID                                                                      *string
		Data                                                                         json.RawMessage
		Offset                                                                       *int64
		DeliveryAttempt                                                              *int
	}
	var answer struct {
		Success                                               *bool
		Error                                                 *string
		Queue, Partition, PartitionID, LeaseID, ConsumerGroup string
		Messages                                              []message
	}
	testutil.CPULoop(b, func() {
		answer.Messages = nil
		if err := json.Unmarshal(body, &answer); err != nil || len(answer.Messages) != 100 {
			b.Fatal(err)
		}
	})
}

// A pop answer of any bytes never panics the decoder. An answer it accepts is one message per
// element of its messages, each the answer's own, with its lease's affinity and data that is
// JSON; one it refuses is an *APIError.
func FuzzDecodePop(f *testing.F) {
	seedAnswers(f, "pop",
		`{"success":true,"queue":"orders","partition":"4","partitionId":"<pid>","leaseId":"<lid>",
 "consumerGroup":"billing","partitionsClaimed":1,
 "messages":[{"id":"<mid>","transactionId":"order-9137","traceId":null,"data":{"n":1},
   "producerSub":null,"createdAt":"<time>","partitionId":"<pid>","partition":"4",
   "leaseId":"<lid>","consumerGroup":"billing","offset":6,"deliveryAttempt":1}]}`,
		`{"messages":[],"paused":true}`,
		`{"messages":[{"offset":"7"}]}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := decodePop(body, route.PopQueue.Pattern, "affinity")
		if err != nil {
			requireAPIError(t, err)
			return
		}
		var a wire.PopAnswer
		require.NoError(t, wire.Unmarshal(body, &a), "an accepted answer is an object")
		require.NotNil(t, msgs)
		require.Len(t, msgs, len(a.Messages))
		for i, m := range msgs {
			require.NotNil(t, m)
			assert.Equal(t, "affinity", m.route)
			assert.Nil(t, m.client, "a client is set by the call, not the decoder")
			assert.False(t, m.settled.Load())
			assert.Equal(t, a.Messages[i].TransactionID, m.TransactionID)
			if len(m.Data) > 0 {
				assert.True(t, json.Valid(m.Data), "data %q", m.Data)
			}
			if a.Messages[i].Offset == nil {
				assert.Equal(t, int64(-1), m.Offset, "no offset is an unknown one")
			}
		}
	})
}
