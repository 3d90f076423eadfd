package broker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkConsumerGroupsWide is the group list of 100 groups on one queue of 1,000
// partitions, each group with a cursor in every partition and one message behind in each.
func BenchmarkConsumerGroupsWide(b *testing.B) {
	e := New(NewManualClock(epoch))
	b.Cleanup(e.Close)
	items := make([]PushItem, 1000)
	for i := range items {
		items[i] = PushItem{Queue: "wide", Partition: fmt.Sprintf("p%03d", i), TransactionID: "a"}
	}
	e.Push(items)
	for g := range 100 {
		if _, err := e.Seek(fmt.Sprintf("g%03d", g), "wide", true, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range items {
		items[i].TransactionID = "b"
	}
	e.Push(items)
	for b.Loop() {
		if list := e.ConsumerGroups("", Page{}); len(list) != 100 || list[0].TotalLag != 1000 {
			b.Fatalf("%d groups", len(list))
		}
	}
}

// BenchmarkReadsBesideConsuming is the engine alone (no HTTP) at the size of the HTTP
// benchmark (10,000 partitions × 100 messages, 100 groups at different positions): one
// goroutine calls a read in a loop while the benchmark pushes one message to a side queue and
// pops and acks it, timing each. The "idle" row has no reader. It tells what the lock costs
// consuming apart from the CPU an HTTP client and its JSON take.
//
//	go test -run '^$' -bench ReadsBesideConsuming -benchtime 20000x ./internal/broker/
func BenchmarkReadsBesideConsuming(b *testing.B) {
	clock := NewManualClock(epoch)
	e := New(clock)
	b.Cleanup(e.Close)
	const parts, perPart, groups = 10_000, 100, 100
	items := make([]PushItem, 0, parts)
	for range perPart {
		for i := range parts {
			items = append(items, PushItem{Queue: "big", Partition: fmt.Sprintf("p%d", i), Payload: []byte(`{"n":1}`)})
		}
		e.Push(items)
		items = items[:0]
		clock.Advance(time.Second)
	}
	for g := range groups {
		if _, err := e.Seek(fmt.Sprintf("g%03d", g), "big", false, epoch.Add(time.Duration(g%perPart)*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
	clock.Advance(2 * time.Hour)
	e.Push([]PushItem{{Queue: "side", Payload: []byte(`{}`)}})
	reads := []struct {
		name string
		read func()
	}{
		{"idle", nil},
		{"queue-list", func() { e.Queues(QueueFilter{Limit: 100}) }},
		{"queue-detail", func() { _, _ = e.QueueDetail("big") }},
		{"group-list", func() { e.ConsumerGroups("", Page{Limit: 1000}) }},
		{"group-detail", func() { _, _ = e.ConsumerGroup("g050", "") }},
		{"lagging", func() { e.Lagging(LaggingQuery{Page: Page{Limit: 1000}}) }},
		{"browse", func() { _, _ = e.Browse(BrowseQuery{Queue: "big", Limit: 200}) }},
		{"overview", func() { e.Overview() }},
	}
	for _, rd := range reads {
		b.Run(rd.name, func(b *testing.B) {
			stop, done := make(chan struct{}), make(chan int)
			go func() {
				n := 0
				for ; rd.read != nil; n++ {
					select {
					case <-stop:
						done <- n
						return
					default:
					}
					rd.read()
				}
				done <- n
			}()
			push, popAck := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				e.Push([]PushItem{{Queue: "side", Payload: []byte(`{}`)}})
				pushed := time.Now()
				res, err := e.Pop(context.Background(), PopRequest{Queue: "side"})
				if err != nil || len(res.Messages) != 1 {
					b.Fatalf("pop: %v, %d messages", err, len(res.Messages))
				}
				e.Ack([]AckItem{ackOf(res.Messages[0], "completed")})
				push, popAck = append(push, pushed.Sub(start)), append(popAck, time.Since(pushed))
			}
			close(stop)
			b.ReportMetric(float64(<-done), "reads")
			for _, m := range []struct {
				d    []time.Duration
				unit string
			}{{push, "push-p99-µs"}, {popAck, "pop+ack-p99-µs"}} {
				slices.Sort(m.d)
				b.ReportMetric(float64(m.d[len(m.d)*99/100].Microseconds()), m.unit)
			}
		})
	}
}
