package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixture is an engine on a manual clock with short-hand calls for tests.
type fixture struct {
	t     *testing.T
	e     *Engine
	clock *ManualClock
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	clock := NewManualClock(epoch)
	e := New(clock, opts...)
	t.Cleanup(e.Close)
	return &fixture{t: t, e: e, clock: clock}
}

// push stores one message per transactionId in queue/partition.
func (f *fixture) push(queue, partition string, txIDs ...string) []PushResult {
	f.t.Helper()
	items := make([]PushItem, len(txIDs))
	for i, tx := range txIDs {
		items[i] = PushItem{Queue: queue, Partition: partition, TransactionID: tx,
			Payload: json.RawMessage(fmt.Sprintf(`{"tx":%q}`, tx))}
	}
	return f.e.Push(items)
}

func (f *fixture) pop(r PopRequest) PopResult {
	f.t.Helper()
	res, err := f.e.Pop(context.Background(), r)
	if err != nil {
		f.t.Fatalf("pop %+v: %v", r, err)
	}
	return res
}

func (f *fixture) ack(items ...AckItem) []AckResult {
	f.t.Helper()
	return f.e.Ack(items)
}

// ackOf builds an ack item for a handed-out message.
func ackOf(m Message, status string) AckItem {
	return AckItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		Status: status, Group: m.ConsumerGroup}
}

func txIDs(ms []Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.TransactionID
	}
	return out
}

func offsets(ms []Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Offset
	}
	return out
}

func attempts(ms []Message) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.DeliveryAttempt
	}
	return out
}
