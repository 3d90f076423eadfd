package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspected is the introspection example's state, the reference broker's reading of the
// state of the 0.15 captures: queue orders (Default empty, p0, p1, p2), groups fast, slow, late and queue mode, read
// 30 s after the first push; plus the empty queue returns in the same namespace.
type inspected struct {
	*fixture
	t0                       time.Time
	p0, p1, p2               string // partition ids
	slowP1Lease, queueLease  string
	slowP1Expiry, qmP0Expiry time.Time
}

func newInspected(t *testing.T) *inspected {
	f := newFixture(t)
	s := &inspected{fixture: f, t0: epoch}
	lease, retries := 600, 1
	f.e.Configure(ConfigureRequest{Queue: "orders", Namespace: "shop", Task: "fulfil", LeaseTime: &lease, RetryLimit: &retries})
	f.e.Configure(ConfigureRequest{Queue: "returns", Namespace: "shop", Task: "refund"})
	s.p0 = f.push("orders", "p0", "p0-0", "p0-1", "p0-2", "p0-3")[0].PartitionID
	s.p1 = f.push("orders", "p1", "p1-0", "p1-1", "p1-2")[0].PartitionID
	s.p2 = f.push("orders", "p2", "p2-0", "p2-1")[0].PartitionID

	assert.Empty(t, f.pop(PopRequest{Queue: "orders", Partition: "p2", Group: "late", SubscriptionMode: "new", Batch: 10}).Messages)

	slow := f.pop(PopRequest{Queue: "orders", Partition: "p0", Group: "slow", SubscriptionMode: "all", Batch: 2})
	f.ack(ackOf(slow.Messages[0], "completed"), ackOf(slow.Messages[1], "completed"))
	held := f.pop(PopRequest{Queue: "orders", Partition: "p1", Group: "slow", SubscriptionMode: "all", Batch: 2})
	require.Len(t, held.Messages, 2)
	s.slowP1Lease, s.slowP1Expiry = held.LeaseID, f.clock.Now().Add(600*time.Second)

	for range 2 {
		qm := f.pop(PopRequest{Queue: "orders", Partition: "p0", Batch: 1})
		f.ack(ackOf(qm.Messages[0], "failed"))
	}
	qm := f.pop(PopRequest{Queue: "orders", Partition: "p0", Batch: 2})
	require.Equal(t, []string{"p0-1", "p0-2"}, txIDs(qm.Messages))
	s.queueLease, s.qmP0Expiry = qm.LeaseID, f.clock.Now().Add(600*time.Second)

	fast := f.pop(PopRequest{Queue: "orders", Partition: "p2", Group: "fast", SubscriptionMode: "all", Batch: 10})
	f.ack(ackOf(fast.Messages[0], "completed"), ackOf(fast.Messages[1], "dlq"))

	f.clock.Advance(3 * time.Second)
	f.push("orders", "p0", "p0-4")
	f.push("orders", "p2", "p2-2")
	for _, p := range []string{"p0", "p1", "p2"} {
		fast := f.pop(PopRequest{Queue: "orders", Partition: p, Group: "fast", SubscriptionMode: "all", Batch: 10})
		for _, m := range fast.Messages {
			f.ack(ackOf(m, "completed"))
		}
	}
	f.clock.Advance(27 * time.Second)
	return s
}

func TestQueueSummaryAndDetailOfTheExample(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	list := s.e.Queues(QueueFilter{Namespace: "shop", Limit: 100})
	require.Len(t, list.Queues, 2)
	assert.Equal(t, int64(2), list.Total)
	assert.Equal(t, "returns", list.Queues[0].Name, "newest first")
	q := list.Queues[1]
	assert.Equal(t, int64(4), q.Partitions)
	assert.Equal(t, Counts{Total: 11, Pending: 8, Processing: 2, Completed: 1, DeadLetter: 2}, q.Messages)
	assert.Equal(t, s.t0, q.CreatedAt)

	page := s.e.Queues(QueueFilter{Limit: 1, Offset: 1})
	assert.Equal(t, []string{"orders"}, []string{page.Queues[0].Name})
	assert.Equal(t, int64(2), page.Total)
	assert.Empty(t, s.e.Queues(QueueFilter{Task: "nope", Limit: 10}).Queues)

	d, err := s.e.QueueDetail("orders")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(600), int64(1), true}, []any{d.Queue.LeaseTime, d.Queue.RetryLimit, d.Queue.DeadLetterQueue})
	assert.Nil(t, d.Queue.RetryDelay)
	assert.Nil(t, d.Queue.TTL)
	assert.Nil(t, d.Queue.MaxSize)
	assert.JSONEq(t, "600", string(d.Queue.Options["leaseTime"]))
	require.Len(t, d.Partitions, 4)
	assert.Equal(t, []string{"Default", "p0", "p1", "p2"}, []string{d.Partitions[0].Name, d.Partitions[1].Name, d.Partitions[2].Name, d.Partitions[3].Name})
	p0 := d.Partitions[1]
	assert.Equal(t, int64(4), p0.LastOffset)
	assert.Equal(t, Counts{Total: 5, Pending: 2, Processing: 2, Completed: 1, Failed: 0, DeadLetter: 1}, p0.Messages)
	assert.Equal(t, []int64{7, 3}, []int64{p0.TotalConsumed, p0.BatchesConsumed})
	assert.Equal(t, s.t0, p0.OldestMessage, "queue mode owes p0-1")
	assert.Equal(t, s.t0.Add(3*time.Second), p0.NewestMessage)
	assert.Equal(t, s.t0.Add(3*time.Second), p0.LastActivity)
	dflt := d.Partitions[0]
	assert.Zero(t, dflt.NewestMessage)
	assert.Zero(t, dflt.OldestMessage)
	assert.Zero(t, dflt.LastActivity)
	assert.Equal(t, int64(-1), dflt.LastOffset)
	assert.Equal(t, Counts{Total: 11, Pending: 8, Processing: 2, Completed: 1, DeadLetter: 2}, d.Totals)

	_, err = s.e.QueueDetail("nope")
	assert.ErrorIs(t, err, ErrQueueNotFound)
}

func TestGroupsOfTheExample(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	list := s.e.ConsumerGroups("", Page{})
	names := make([]string, len(list))
	for i, g := range list {
		names[i] = g.Name + "/" + g.Queue
	}
	assert.Equal(t, []string{"__QUEUE_MODE__/orders", "fast/orders", "late/orders", "slow/orders"}, names)
	slow := list[3]
	assert.Equal(t, GroupSummary{
		Name: "slow", Queue: "orders", Members: 2, PartitionsWithLag: 3, TotalLag: 9, MaxTimeLag: 30,
		State: "Stable", Subscription: &Subscription{Mode: "all", CreatedAt: s.t0},
	}, slow)
	late := list[2]
	assert.Equal(t, &Subscription{Mode: "new", Timestamp: s.t0, CreatedAt: s.t0}, late.Subscription)
	assert.Equal(t, int64(0), late.Members)
	assert.Equal(t, "Dead", late.State, "never handed a message, no lease")
	assert.Equal(t, int64(2), late.TotalLag, "p0-4 and p2-2 came after its start")
	assert.Equal(t, int64(2), late.PartitionsWithLag)
	assert.Equal(t, int64(27), late.MaxTimeLag)
	qm := list[0]
	assert.Nil(t, qm.Subscription)
	assert.Equal(t, int64(1), qm.Members)
	assert.Equal(t, int64(4+3+3), qm.TotalLag)
	assert.Equal(t, "Stable", qm.State)
	assert.Len(t, s.e.ConsumerGroups("returns", Page{}), 0)
	assert.Len(t, s.e.ConsumerGroups("nope", Page{}), 0)

	d, err := s.e.ConsumerGroup("slow", "")
	require.NoError(t, err)
	require.Len(t, d, 1)
	parts := d["orders"]
	require.Len(t, parts, 4)
	assert.Equal(t, GroupPartition{
		Partition: "p1", PartitionID: s.p1, Cursor: -1, OffsetLag: 3, Pending: 1, Processing: 2,
		TimeLagSeconds: 30, LeaseActive: true, WorkerID: s.slowP1Lease, LeaseExpiresAt: s.slowP1Expiry,
	}, parts[2])
	p0 := parts[1]
	assert.Equal(t, int64(1), p0.Cursor)
	assert.Equal(t, int64(3), p0.OffsetLag)
	assert.Equal(t, int64(2), p0.TotalConsumed)
	assert.Equal(t, s.t0, p0.LastConsumedAt)
	p2 := parts[3]
	assert.Equal(t, GroupPartition{
		Partition: "p2", PartitionID: s.p2, Cursor: -1, OffsetLag: 3, Pending: 3, TimeLagSeconds: 30,
	}, p2, "never read there: its start places it")

	qmd, err := s.e.ConsumerGroup(QueueMode, "orders")
	require.NoError(t, err)
	qp0 := qmd["orders"][1]
	assert.Equal(t, int64(0), qp0.Cursor)
	assert.Equal(t, int64(4), qp0.OffsetLag)
	assert.Equal(t, int64(0), qp0.TotalConsumed, "the dead-lettered message is not finished")
	assert.Equal(t, int64(0), qp0.Retries, "reset once the dead letter moved the cursor")

	_, err = s.e.ConsumerGroup("nobody", "")
	assert.ErrorIs(t, err, ErrGroupNotFound)
	_, err = s.e.ConsumerGroup("slow", "returns")
	assert.ErrorIs(t, err, ErrGroupNotFound)
}

func TestLaggingOfTheExample(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	all := s.e.Lagging(LaggingQuery{})
	var got []string
	for _, e := range all {
		got = append(got, e.Group+"/"+e.Partition)
	}
	assert.Equal(t, []string{"__QUEUE_MODE__/p0", "__QUEUE_MODE__/p1", "__QUEUE_MODE__/p2", "slow/p0", "slow/p1", "slow/p2", "late/p0", "late/p2"}, got)
	assert.Equal(t, LaggingEntry{
		Group: "slow", Queue: "orders", Partition: "p1", PartitionID: s.p1, OffsetLag: 3,
		TimeLagSeconds: 30, LagHours: 0.01, OldestUnconsumedAt: s.t0, WorkerID: s.slowP1Lease,
	}, all[4])
	assert.Empty(t, s.e.Lagging(LaggingQuery{MinLagSeconds: 30}), "strictly above")
	assert.Len(t, s.e.Lagging(LaggingQuery{MinLagSeconds: 29, Group: "slow"}), 3)
	assert.Empty(t, s.e.Lagging(LaggingQuery{Queue: "returns"}))
	assert.Len(t, s.e.Lagging(LaggingQuery{MinLagSeconds: 20, Group: "late", Queue: "orders"}), 2)
}

func TestOverviewOfTheExample(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	o := s.e.Overview()
	assert.Equal(t, Overview{
		Queues: 2, Partitions: 5, Namespaces: 1, Tasks: 2,
		Messages:  Counts{Total: 11, Pending: 8, Processing: 2, Completed: 1, DeadLetter: 2},
		OffsetLag: LagStats{Min: 0, Max: 4, Avg: 2, Median: 3}, TimeLag: LagStats{Min: 0, Max: 30, Avg: 18, Median: 30},
		IngestedPerSecond: 0.04, ProcessedPerSecond: 0.04,
		Timestamp: s.t0.Add(30 * time.Second),
	}, o)
	s.clock.Advance(300 * time.Second)
	o = s.e.Overview()
	assert.Equal(t, []float64{0, 0}, []float64{o.IngestedPerSecond, o.ProcessedPerSecond}, "older than the window")
}

func TestMessagesOfTheExample(t *testing.T) {
	t.Parallel()
	s := newInspected(t)
	list, err := s.e.Browse(BrowseQuery{Queue: "orders", Partition: "p0", Limit: 200})
	require.NoError(t, err)
	assert.Equal(t, GroupKinds{HasQueueMode: true, BusGroupsCount: 3, Type: "hybrid"}, list.Mode)
	var got []string
	for _, m := range list.Messages {
		got = append(got, m.TransactionID+":"+m.Status)
	}
	assert.Equal(t, []string{"p0-4:pending", "p0-3:pending", "p0-2:processing", "p0-1:processing", "p0-0:dead_letter"}, got)
	e1 := list.Messages[3]
	assert.Equal(t, int64(1), e1.Offset)
	assert.Equal(t, []int64{3, 3}, []int64{e1.ConsumedBy, e1.TotalGroups})
	assert.Equal(t, s.qmP0Expiry, e1.LeaseExpiresAt)
	assert.Equal(t, "orders/p0", e1.QueuePath)
	assert.Nil(t, e1.Payload)
	assert.Zero(t, list.Messages[0].LeaseExpiresAt)

	all, err := s.e.Browse(BrowseQuery{Queue: "orders", Limit: 3, Ascending: true, Payload: true})
	require.NoError(t, err)
	got = got[:0]
	for _, m := range all.Messages {
		got = append(got, m.TransactionID)
	}
	assert.Equal(t, []string{"p0-0", "p0-1", "p0-2"}, got, "storage order")
	assert.JSONEq(t, `{"tx":"p0-0"}`, string(all.Messages[0].Payload))

	newest, err := s.e.Browse(BrowseQuery{Queue: "orders", Limit: 2, Offset: 1})
	require.NoError(t, err)
	assert.Equal(t, "p0-4", newest.Messages[0].TransactionID, "p2-2 is newest, skipped by offset")
	assert.Equal(t, "p2-1", newest.Messages[1].TransactionID)

	dead, err := s.e.Browse(BrowseQuery{Queue: "orders", Status: statusDeadLetter, Limit: 10})
	require.NoError(t, err)
	require.Len(t, dead.Messages, 2)
	assert.Equal(t, "p2-1", dead.Messages[0].TransactionID)

	from := s.t0.Add(time.Second)
	later, err := s.e.Browse(BrowseQuery{Queue: "orders", From: &from, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, later.Messages, 2)
	to := s.t0
	earlier, err := s.e.Browse(BrowseQuery{Queue: "orders", From: &from, To: &to, Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, earlier.Messages, "from after to matches nothing")

	n := int64(2)
	down, err := s.e.Browse(BrowseQuery{Queue: "orders", Partition: "p1", FromOffset: &n, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, down.Messages, 3)
	up, err := s.e.Browse(BrowseQuery{Queue: "orders", Partition: "p1", FromOffset: &n, Ascending: true, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, up.Messages, 1)

	shop, other := "shop", "other"
	labelled, err := s.e.Browse(BrowseQuery{Queue: "orders", Namespace: &shop, Limit: 1})
	require.NoError(t, err)
	assert.Len(t, labelled.Messages, 1)
	unlabelled, err := s.e.Browse(BrowseQuery{Queue: "orders", Task: &other, Limit: 1})
	require.NoError(t, err)
	assert.Empty(t, unlabelled.Messages)

	_, err = s.e.Browse(BrowseQuery{Queue: "nope", Limit: 1})
	assert.ErrorIs(t, err, ErrQueueNotFound)
	_, err = s.e.Browse(BrowseQuery{Queue: "orders", Partition: "p9", Limit: 1})
	assert.ErrorIs(t, err, ErrPartitionNotFound)
	empty, err := s.e.Browse(BrowseQuery{Queue: "returns", Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, MessageList{Messages: []MessageEntry{}, Mode: GroupKinds{Type: "none"}}, empty)

	d, err := s.e.Message(s.p0, "p0-0")
	require.NoError(t, err)
	assert.Equal(t, statusDeadLetter, d.Status)
	assert.JSONEq(t, `{"tx":"p0-0"}`, string(d.Payload))
	assert.Equal(t, "Retries exhausted", *d.ErrorMessage)
	assert.Equal(t, int64(1), *d.RetryCount)
	assert.Equal(t, int64(3), d.ConsumedBy)
	assert.Equal(t, MessageQueueConfig{LeaseTime: 600, RetryLimit: 1}, d.Config)
	assert.Equal(t, []MessageGroup{
		{Name: QueueMode, Consumed: true, Status: statusDeadLetter, DeliveryAttempt: 2},
		{Name: "fast", Consumed: true, Status: statusCompleted, DeliveryAttempt: 1},
		{Name: "late", Consumed: true, Status: statusCompleted, DeliveryAttempt: 0},
		{Name: "slow", Consumed: true, Status: statusCompleted, DeliveryAttempt: 1},
	}, d.Groups)

	d, err = s.e.Message(s.p1, "p1-0")
	require.NoError(t, err)
	assert.Equal(t, "pending", d.Status, "queue mode's view: it never read p1")
	assert.Nil(t, d.ErrorMessage)
	assert.Equal(t, s.slowP1Expiry, d.Groups[3].LeaseExpiresAt)
	assert.Equal(t, statusProcessing, d.Groups[3].Status)

	_, err = s.e.Message(s.p1, "nope")
	assert.ErrorIs(t, err, ErrMessageNotFound)
	_, err = s.e.Message("nope", "p1-0")
	assert.ErrorIs(t, err, ErrMessageNotFound)
}
