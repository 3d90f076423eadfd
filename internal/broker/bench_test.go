package broker

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

const benchBatch = 100

func benchItems(queue string, n int, payload []byte) []PushItem {
	items := make([]PushItem, n)
	for i := range items {
		items[i] = PushItem{Queue: queue, Payload: payload}
	}
	return items
}

// BenchmarkPush stores 100 items per request, as one push request carries them.
func BenchmarkPush(b *testing.B) {
	payload := []byte(`{"n":1,"kind":"order","note":"a small message"}`)
	e := New(RealClock{})
	defer e.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	for i := range b.N {
		if i%1000 == 999 { // keep the heap small between rounds
			b.StopTimer()
			e.Close()
			e = New(RealClock{})
			b.StartTimer()
		}
		items := benchItems("q", benchBatch, payload)
		for j := range items {
			items[j].TransactionID = "t" + strconv.Itoa(i*benchBatch+j)
		}
		if res := e.Push(items); len(res) != benchBatch {
			b.Fatal("short push")
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu).Nanoseconds())/float64(b.N*benchBatch), "cpu-ns/msg")
}

// BenchmarkPopAck pops 100 messages and acks them in one batch ack, the consume loop's step.
func BenchmarkPopAck(b *testing.B) {
	payload := []byte(`{"n":1}`)
	e := New(RealClock{})
	defer e.Close()
	ctx := context.Background()
	acks := make([]AckItem, benchBatch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%100 == 0 {
			b.StopTimer()
			e.Push(benchItems("q", 100*benchBatch, payload))
			b.StartTimer()
		}
		res, err := e.Pop(ctx, PopRequest{Queue: "q", Batch: benchBatch})
		if err != nil || len(res.Messages) != benchBatch {
			b.Fatalf("pop: %v, %d messages", err, len(res.Messages))
		}
		for j, m := range res.Messages {
			acks[j] = AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID}
		}
		out := e.Ack(acks)
		if !out[benchBatch-1].LeaseReleased {
			b.Fatal("lease not released")
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkRetainedMemory reports the heap one stored 1 KB message keeps, after a group has
// also consumed it.
func BenchmarkRetainedMemory(b *testing.B) {
	const n = 20000
	payload := []byte(`{"blob":"` + string(make1K()) + `"}`)
	var perMsg float64
	for range b.N {
		before := heapInUse()
		e := New(RealClock{})
		for i := 0; i < n; i += benchBatch {
			e.Push(benchItems("q", benchBatch, payload))
		}
		for range n / benchBatch {
			res, _ := e.Pop(context.Background(), PopRequest{Queue: "q", Batch: benchBatch})
			acks := make([]AckItem, len(res.Messages))
			for j, m := range res.Messages {
				acks[j] = AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID}
			}
			e.Ack(acks)
		}
		after := heapInUse()
		perMsg = float64(after-before) / n
		runtime.KeepAlive(e)
		e.Close()
	}
	b.ReportMetric(perMsg, "retained-B/msg")
	b.ReportMetric(float64(len(payload)), "payload-B")
}

func make1K() []byte {
	blob := make([]byte, 1024-len(`{"blob":""}`))
	for i := range blob {
		blob[i] = 'a' + byte(i%26)
	}
	return blob
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkPushParallel stores 1,000 items per request from four goroutines at once, each to a
// queue of its own: what the lock holds back when requests come together.
func BenchmarkPushParallel(b *testing.B) {
	const perRequest, writers = 1000, 4
	payload := []byte(`{"n":1,"kind":"order","note":"a small message"}`)
	e := New(RealClock{})
	defer e.Close()
	requests := (b.N + perRequest*writers - 1) / (perRequest * writers)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range requests {
				e.Push(benchItems("q"+strconv.Itoa(w), perRequest, payload))
			}
		})
	}
	wg.Wait()
	msgs := requests * perRequest * writers
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu).Nanoseconds())/float64(msgs), "cpu-ns/msg")
}
