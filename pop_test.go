package queen

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
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
