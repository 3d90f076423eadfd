package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// fillPartitions pushes one message to each of n partitions of queue q, in pushes of at most
// 1,000 items, and returns the partition names.
func fillPartitions(e *Engine, q string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "p" + strconv.Itoa(i)
	}
	payload := json.RawMessage(`{"n":1}`)
	for start := 0; start < n; start += 1000 {
		items := make([]PushItem, 0, 1000)
		for _, name := range names[start:min(start+1000, n)] {
			items = append(items, PushItem{Queue: q, Partition: name, Payload: payload})
		}
		e.Push(items)
	}
	return names
}

// reportCPU reports the process's CPU time per operation since start: on a machine shared with
// other work it varies much less than the wall time does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((testutil.ProcessCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkPopAckPartitions is one consumed message on a queue of P ready partitions: a pop of
// one message, its ack, and the push that gives the partition its next message, so P partitions
// stay ready throughout. A pop's cost should not grow with P.
func BenchmarkPopAckPartitions(b *testing.B) {
	for _, parts := range []int{1, 100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			e := New(RealClock{})
			defer e.Close()
			fillPartitions(e, "q", parts)
			payload := json.RawMessage(`{"n":1}`)
			step := func() {
				res, err := e.Pop(context.Background(), PopRequest{Queue: "q"})
				if err != nil || len(res.Messages) != 1 {
					b.Fatalf("pop: %v, %d messages", err, len(res.Messages))
				}
				m := res.Messages[0]
				if out := e.Ack([]AckItem{{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID}}); !out[0].LeaseReleased {
					b.Fatal("lease not released")
				}
				e.Push([]PushItem{{Queue: "q", Partition: m.Partition, Payload: payload}})
			}
			step()       // the group's first pop places its cursors
			runtime.GC() // and the setup's garbage is not the loop's
			b.ReportAllocs()
			b.ResetTimer()
			cpu := testutil.ProcessCPU()
			for range b.N {
				step()
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPushWithWaiters is the latency of a one-item push to a 10,000-partition queue while
// W long polls of a group wait on it. The group holds a lease on every partition, so no push can
// serve them: a push's cost should not grow with W.
func BenchmarkPushWithWaiters(b *testing.B) {
	const parts = 10_000
	for _, waiters := range []int{0, 100, 2000} {
		b.Run(fmt.Sprintf("waiters=%d", waiters), func(b *testing.B) {
			e := New(RealClock{})
			names := fillPartitions(e, "q", parts)
			for leased := 0; leased < parts; {
				res, err := e.Pop(context.Background(), PopRequest{Queue: "q", Group: "w", SubscriptionMode: "all",
					Partitions: maxPartitions, Batch: maxPartitions, LeaseSeconds: 3600})
				if err != nil || res.PartitionsClaimed == 0 {
					b.Fatalf("leasing the partitions: %v after %d", err, leased)
				}
				leased += res.PartitionsClaimed
			}
			parked := make(chan struct{}, waiters)
			e.parked = func() { parked <- struct{}{} }
			done := make(chan struct{}, waiters)
			for range waiters {
				go func() {
					_, _ = e.Pop(context.Background(), PopRequest{Queue: "q", Group: "w", Wait: true, Timeout: time.Hour})
					done <- struct{}{}
				}()
			}
			for range waiters {
				<-parked
			}
			payload := json.RawMessage(`{"n":1}`)
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				item := []PushItem{{Queue: "q", Partition: names[i%parts], Payload: payload}}
				start := time.Now()
				e.Push(item)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			if n := e.WaitingPops(); n != waiters {
				b.Fatalf("%d pops waiting, want %d", n, waiters)
			}
			e.Close()
			for range waiters {
				<-done
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkPushServingWaiters is the latency of a one-item push to an idle 10,000-partition
// queue while 2,000 long polls (autoAck) wait on it: each push is handed to one of them, whose
// goroutine then waits again.
func BenchmarkPushServingWaiters(b *testing.B) {
	const parts, waiters = 10_000, 2000
	e := New(RealClock{})
	names := fillPartitions(e, "q", parts)
	for { // drain the backlog so that every push finds waiting pops
		res, _ := e.Pop(context.Background(), PopRequest{Queue: "q", Batch: parts, Partitions: maxPartitions, AutoAck: true})
		if len(res.Messages) == 0 {
			break
		}
	}
	parked := make(chan struct{}, 4*waiters)
	e.parked = func() { parked <- struct{}{} }
	stop := make(chan struct{})
	done := make(chan struct{}, waiters)
	served := make(chan struct{}, 4*waiters)
	for range waiters {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, _ := e.Pop(context.Background(), PopRequest{Queue: "q", AutoAck: true, Wait: true, Timeout: time.Hour})
				if len(res.Messages) > 0 {
					served <- struct{}{}
				}
			}
		}()
	}
	for range waiters {
		<-parked
	}
	payload := json.RawMessage(`{"n":1}`)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		item := []PushItem{{Queue: "q", Partition: names[i%parts], Payload: payload}}
		start := time.Now()
		e.Push(item)
		lat = append(lat, time.Since(start))
		b.StopTimer()
		<-served // the pop it answered, then that pop waiting again
		<-parked
		b.StartTimer()
	}
	b.StopTimer()
	close(stop)
	e.Close()
	for range waiters {
		<-done
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkDeadLetterList is the first page of one queue's dead letters among 20,000 filed
// across 20 queues.
func BenchmarkDeadLetterList(b *testing.B) {
	e := New(RealClock{})
	defer e.Close()
	for q := range 20 {
		name := "q" + strconv.Itoa(q)
		e.Push(benchItems(name, 1000, json.RawMessage(`{"n":1}`)))
		res, err := e.Pop(context.Background(), PopRequest{Queue: name, Batch: 1000})
		if err != nil || len(res.Messages) != 1000 {
			b.Fatalf("pop: %v, %d messages", err, len(res.Messages))
		}
		acks := make([]AckItem, len(res.Messages))
		for i, m := range res.Messages {
			acks[i] = AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "dlq"}
		}
		e.Ack(acks)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	defer reportCPU(b, cpu)
	for range b.N {
		if list, total := e.DeadLetters(DLQQuery{Queue: "q7", Limit: 100}); len(list) != 100 || total != 1000 {
			b.Fatalf("%d listed of %d", len(list), total)
		}
	}
}

// BenchmarkLargestRequests is the engine's time, all of it under its lock, for the largest
// push (10,000 items) and the largest pop (10,000 messages) a request may carry.
func BenchmarkLargestRequests(b *testing.B) {
	const n = 10_000
	payload := json.RawMessage(`{"n":1,"kind":"order","note":"a small message"}`)
	b.Run("push=10000", func(b *testing.B) {
		e := New(RealClock{})
		defer e.Close()
		b.ReportAllocs()
		for i := range b.N {
			if i%20 == 19 { // keep the heap small between rounds
				b.StopTimer()
				e.Close()
				e = New(RealClock{})
				b.StartTimer()
			}
			e.Push(benchItems("q", n, payload))
		}
	})
	b.Run("pop=10000", func(b *testing.B) {
		e := New(RealClock{})
		defer e.Close()
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			e.Push(benchItems("q", n, payload))
			b.StartTimer()
			res, err := e.Pop(context.Background(), PopRequest{Queue: "q", Batch: n, AutoAck: true})
			if err != nil || len(res.Messages) != n {
				b.Fatalf("pop: %v, %d messages", err, len(res.Messages))
			}
		}
	})
}
