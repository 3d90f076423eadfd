package refserver

import (
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// Benchmarks of the broker's hottest bodies: reading a push of 100 items, writing its answer,
// and writing a 100-message pop answer. Each reports cpu-ns/op, the process's CPU time per
// operation.
//
//	go test -run '^$' -bench '^Benchmark(ReadPush|WritePush|WritePop)' -count 5 ./queentest/

func BenchmarkReadPushRequest(b *testing.B) {
	body := pushBody("push-bench", 100, 0)
	testutil.CPULoop(b, func() {
		o, err := decodeObject(body)
		if err != nil {
			b.Fatal(err)
		}
		if items, err := decodePushItems(o.raw("items"), "items"); err != nil || len(items) != 100 {
			b.Fatal(err)
		}
	})
}

func BenchmarkWritePushAnswer(b *testing.B) {
	results := make([]broker.PushResult, 100)
	for i := range results {
		results[i] = broker.PushResult{Index: i, TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", Status: "queued",
			MessageID: "01a2315b-226a-794d-be17-8b4942b4e008", PartitionID: "99fee5aa-5753-422b-be1c-ed7420de2cb2",
			QueueName: "orders", Offset: int64(i)}
	}
	testutil.CPULoop(b, func() {
		if len(encodePushAnswer(results)) == 0 {
			b.Fatal("empty")
		}
	})
}

func BenchmarkWritePopAnswer(b *testing.B) {
	res := broker.PopResult{Queue: "orders", Partition: "eu-west", PartitionID: "99fee5aa-5753-422b-be1c-ed7420de2cb2",
		LeaseID: "f5ba7391-6469-4851-b87a-0ea9404f65a7", ConsumerGroup: "billing", PartitionsClaimed: 1}
	created := time.Date(2026, 12, 1, 11, 26, 25, 898604000, time.UTC)
	for i := range 100 {
		res.Messages = append(res.Messages, broker.Message{ID: "01a2315b-226a-794d-be17-8b4942b4e008",
			TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", CreatedAt: created,
			Data:        []byte(`{"customer":{"id":"cust-004000","tier":"gold"},"order":91370,"qty":1,"sku":"SKU-00000"}`),
			PartitionID: res.PartitionID, Partition: res.Partition, LeaseID: res.LeaseID, Offset: int64(i), DeliveryAttempt: 1})
	}
	testutil.CPULoop(b, func() {
		if len(encodePopAnswer(&res)) == 0 {
			b.Fatal("empty")
		}
	})
}

func encodePushAnswer(results []broker.PushResult) []byte {
	b, _ := wire.Marshal(pushAnswer(results))
	return b
}

func encodePopAnswer(res *broker.PopResult) []byte {
	b, _ := wire.Marshal(popAnswer(res))
	return b
}
