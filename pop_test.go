package queen

import (
	"encoding/json"
	"os"
	"testing"
	"time"

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

// A pop answer of any bytes never panics the decoder, and the decoder reads exactly what the
// answer's typed shape (wire.PopAnswer, read by the codec) says: it accepts the bodies the codec
// accepts, refuses the others with an *APIError, and gives every message the same fields.
func FuzzDecodePop(f *testing.F) {
	seedAnswers(f, "pop",
		`{"success":true,"queue":"orders","partition":"4","partitionId":"<pid>","leaseId":"<lid>",
 "consumerGroup":"billing","partitionsClaimed":1,
 "messages":[{"id":"<mid>","transactionId":"order-9137","traceId":null,"data":{"n":1},
   "producerSub":null,"createdAt":"<time>","partitionId":"<pid>","partition":"4",
   "leaseId":"<lid>","consumerGroup":"billing","offset":6,"deliveryAttempt":1}]}`,
		`{"messages":[],"paused":true}`,
		`{"messages":[{"offset":"7"}]}`,
		`{"leaseId":"l","queue":"q","messages":[{"id":"a","leaseId":"l","queue":"q","data":"\u00e9\ufffd"},null,{"id":"b","queue":"r"}]}`,
		"{\"messages\":[{\"id\":\"\xff\",\"data\":\"\xfe\"}],\"q\\u0075eue\":\"esc\"}",
		`{"messages":[{"offset":1.5}]}`, `{"messages":[{"deliveryAttempt":-3,"createdAt":"2026-11-29T21:43:41.780939Z"}]} `,
		`{"messages":[]} {}`, `{"success":null,"error":null,"messages":[{"traceId":"t","producerSub":7}]}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := decodePop(body, route.PopQueue.Pattern, "affinity")
		want, wantErr := decodePopByStruct(body, route.PopQueue.Pattern, "affinity")
		if err != nil {
			requireAPIError(t, err)
			require.Error(t, wantErr, "the codec reads %q", body)
			assert.Equal(t, wantErr.(*APIError).NotJSON, err.(*APIError).NotJSON, "%v; the codec: %v", err, wantErr)
			return
		}
		require.NoError(t, wantErr, "read %q", body)
		require.NotNil(t, msgs)
		require.Len(t, msgs, len(want))
		for i, m := range msgs {
			require.NotNil(t, m)
			w := want[i]
			assert.Equal(t, "affinity", m.route)
			assert.Nil(t, m.client, "a client is set by the call, not the decoder")
			assert.False(t, m.settled.Load())
			assert.Equal(t, [8]string{w.ID, w.TransactionID, w.TraceID, w.Queue, w.Partition, w.PartitionID, w.ConsumerGroup, w.LeaseID},
				[8]string{m.ID, m.TransactionID, m.TraceID, m.Queue, m.Partition, m.PartitionID, m.ConsumerGroup, m.LeaseID})
			assert.Equal(t, w.Offset, m.Offset)
			assert.Equal(t, w.DeliveryAttempt, m.DeliveryAttempt)
			assert.True(t, w.CreatedAt.Equal(m.CreatedAt), "createdAt %v, the codec %v", m.CreatedAt, w.CreatedAt)
			assert.Equal(t, w.Data, m.Data)
			if len(m.Data) > 0 {
				assert.True(t, json.Valid(m.Data), "data %q", m.Data)
			}
		}
	})
}

// decodePopByStruct reads a pop body through the codec into wire.PopAnswer: what the answer's
// shape says, the decoder's reference.
func decodePopByStruct(body []byte, path, route string) ([]*Message, error) {
	var a wire.PopAnswer
	if err := wire.Unmarshal(body, &a); err != nil {
		return nil, &APIError{StatusCode: 200, Path: path, Message: err.Error(), NotJSON: true}
	}
	if a.Success != nil && !*a.Success && a.Error != nil && !wire.EmptyPopErrors[*a.Error] {
		return nil, &APIError{StatusCode: 200, Path: path, Message: *a.Error}
	}
	if a.Messages == nil {
		return nil, &APIError{StatusCode: 200, Path: path, Message: "no messages"}
	}
	msgs := make([]*Message, len(a.Messages))
	for i, w := range a.Messages {
		m := &Message{ID: w.ID, TransactionID: w.TransactionID, TraceID: deref(w.TraceID),
			Queue: firstNonEmpty(w.Queue, a.Queue), Partition: firstNonEmpty(w.Partition, a.Partition),
			PartitionID: firstNonEmpty(w.PartitionID, deref(a.PartitionID)), LeaseID: firstNonEmpty(w.LeaseID, deref(a.LeaseID)),
			ConsumerGroup: firstNonEmpty(w.ConsumerGroup, a.ConsumerGroup), Offset: -1, Data: json.RawMessage(w.Data), route: route}
		if w.Offset != nil {
			m.Offset = *w.Offset
		}
		if w.DeliveryAttempt != nil {
			m.DeliveryAttempt = *w.DeliveryAttempt
		}
		m.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
		msgs[i] = m
	}
	return msgs, nil
}
