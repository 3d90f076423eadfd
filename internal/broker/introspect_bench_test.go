package broker

import (
	"fmt"
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
