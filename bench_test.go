package queen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

const benchBatch = 100

// BenchmarkPopAck pops 100 messages and acks them with one batch ack, through the SDK and
// through a plain net/http loop sending the same requests, against one in-process reference
// broker. msgs/s and allocs/msg count the pop and the ack only (the refill push is untimed);
// allocations include the broker's, which runs in the same process.
//
//	go test -run '^$' -bench BenchmarkPopAck -benchtime 2000x .
func BenchmarkPopAck(b *testing.B) {
	srv, err := queentest.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	c, err := queen.New(srv.URL(), queen.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	b.Run("sdk", func(b *testing.B) {
		q := c.Queue("bench-sdk")
		pop := q.Batch(benchBatch)
		items := make([]queen.AckItem, 0, benchBatch)
		runPopAck(b, c, q, func() int {
			msgs, err := pop.Pop(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			items = items[:0]
			for _, m := range msgs {
				items = append(items, queen.AckItem{Message: m, Status: queen.StatusCompleted})
			}
			results, err := c.AckBatch(b.Context(), items)
			if err != nil {
				b.Fatal(err)
			}
			return len(results)
		})
	})

	b.Run("raw", func(b *testing.B) {
		popURL := srv.URL() + "/api/v1/pop/queue/bench-raw?batch=100"
		ackURL := srv.URL() + "/api/v1/ack/batch"
		runPopAck(b, c, c.Queue("bench-raw"), func() int {
			resp, err := hc.Get(popURL)
			if err != nil {
				b.Fatal(err)
			}
			var popped struct {
				ConsumerGroup string `json:"consumerGroup"`
				Messages      []struct {
					ID            string          `json:"id"`
					TransactionID string          `json:"transactionId"`
					PartitionID   string          `json:"partitionId"`
					LeaseID       string          `json:"leaseId"`
					Data          json.RawMessage `json:"data"`
				} `json:"messages"`
			}
			err = json.NewDecoder(resp.Body).Decode(&popped)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			type ack struct {
				TransactionID string `json:"transactionId"`
				PartitionID   string `json:"partitionId"`
				LeaseID       string `json:"leaseId"`
				Status        string `json:"status"`
			}
			acks := make([]ack, len(popped.Messages))
			for i, m := range popped.Messages {
				acks[i] = ack{m.TransactionID, m.PartitionID, m.LeaseID, "completed"}
			}
			body, _ := json.Marshal(map[string]any{"acknowledgments": acks})
			resp, err = hc.Post(ackURL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			var results []struct {
				Success bool `json:"success"`
			}
			err = json.NewDecoder(resp.Body).Decode(&results)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			return len(results)
		})
	})
}

// runPopAck refills q with 100 messages (untimed) and runs popAck once per iteration.
func runPopAck(b *testing.B, c *queen.Client, q queen.QueueBuilder, popAck func() int) {
	items := make([]queen.PushItem, benchBatch)
	for i := range items {
		items[i] = queen.PushItem{Data: json.RawMessage(fmt.Sprintf(`{"order":%d,"sku":"A-%04d","qty":3}`, i, i))}
	}
	var before, after runtime.MemStats
	var mallocs uint64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range items {
			items[i].TransactionID = "" // fresh ids each round
		}
		if _, err := q.Push(b.Context(), items...); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&before)
		b.StartTimer()
		if n := popAck(); n != benchBatch {
			b.Fatalf("acked %d messages, want %d", n, benchBatch)
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		b.StartTimer()
	}
	b.StopTimer()
	msgs := float64(b.N * benchBatch)
	b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(mallocs)/msgs, "allocs/msg")
}
