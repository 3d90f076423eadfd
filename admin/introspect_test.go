package admin_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// lagState: queue orders (partitions p0 with 4 messages, p1 with 3) in namespace shop; slow
// finished p0's first two and holds a lease on p1's first two; queue mode dead-lettered p0's
// first; everything read 30 s after the pushes.
func lagState(t *testing.T) fixture {
	t.Helper()
	return lagStateIn(t, testmode.Modes[0])
}

// lagStateIn is lagState with the broker in mode m.
func lagStateIn(t *testing.T, m testmode.Mode) fixture {
	t.Helper()
	f := newFixtureIn(t, m)
	ctx := context.Background()
	require.NoError(t, f.admin.ConfigureQueue(ctx, "orders", admin.QueueOptions{
		LeaseTime: 600 * time.Second, RetryLimit: new(0), Namespace: "shop", Task: "fulfil"}))
	f.push(t, "orders", "p0", 0, 1, 2, 3)
	f.push(t, "orders", "p1", 0, 1, 2)
	slow := f.client.Queue("orders").Group("slow").SubscriptionMode(queen.SubscribeAll).Batch(2)
	msgs, err := slow.Partition("p0").Pop(ctx)
	require.NoError(t, err)
	f.ackAll(t, msgs)
	msgs, err = slow.Partition("p1").Pop(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	msgs, err = f.client.Queue("orders").Partition("p0").Batch(1).Pop(ctx)
	require.NoError(t, err)
	require.NoError(t, msgs[0].Nack(ctx, errors.New("boom")))
	f.srv.Advance(30 * time.Second)
	return f
}

func TestQueuesAndQueueInfo(t *testing.T) {
	t.Parallel()
	f := lagState(t)
	ctx := context.Background()
	f.push(t, "other", "", 1)
	qs, err := f.admin.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 2)
	assert.Equal(t, "other", qs[0].Name, "newest first")
	o := qs[1]
	assert.Equal(t, "orders", o.Name)
	assert.Equal(t, "shop", o.Namespace)
	assert.Equal(t, int64(3), o.PartitionCount, "Default, p0, p1")
	assert.Nil(t, o.Partitions)
	assert.Equal(t, int64(7), o.Messages)
	assert.False(t, o.Approximate)
	// p0: queue mode is slowest (3 behind after its dead letter, slow 2); p1: queue mode 3.
	assert.Equal(t, int64(6), o.Pending)
	assert.Equal(t, int64(1), o.DeadLetters)

	only, err := f.admin.QueuesIn(ctx, "shop", "")
	require.NoError(t, err)
	assert.Len(t, only, 1)

	info, err := f.admin.QueueInfo(ctx, "orders")
	require.NoError(t, err)
	assert.Equal(t, 600*time.Second, info.Config.LeaseTime)
	assert.Equal(t, 0, info.Config.RetryLimit)
	assert.True(t, info.Config.DeadLetterQueue)
	require.Len(t, info.Partitions, 3)
	assert.Equal(t, "Default", info.Partitions[0].Name)
	assert.Equal(t, info.Partitions[0].ID, info.Config.PartitionID)
	p0 := info.Partitions[1]
	assert.Equal(t, int64(4), p0.Messages)
	assert.Equal(t, int64(3), p0.LastOffset)
	assert.Equal(t, int64(1), p0.DeadLetters)
	assert.Equal(t, f.srv.Now().Add(-30*time.Second), p0.Newest)
	assert.True(t, info.Partitions[0].Newest.IsZero())

	_, err = f.admin.QueueInfo(ctx, "nope")
	assert.ErrorIs(t, err, admin.ErrNotFound)
	_, err = f.admin.QueueInfo(ctx, "..")
	assert.ErrorIs(t, err, queen.ErrInvalidOption)
}

func TestConsumerGroupsAndConsumerGroup(t *testing.T) {
	t.Parallel()
	f := lagState(t)
	ctx := context.Background()
	groups, err := f.admin.ConsumerGroups(ctx)
	require.NoError(t, err)
	require.Len(t, groups, 2)
	assert.Equal(t, "__QUEUE_MODE__", groups[0].Name)
	slow := groups[1]
	require.Len(t, slow.Queues, 1)
	assert.Equal(t, admin.GroupQueue{
		Queue: "orders", Lag: 5, TimeLag: 30 * time.Second, PartitionsWithLag: 2, Members: 2,
		State: "Stable", SubscriptionMode: "all",
	}, slow.Queues[0])

	g, err := f.admin.ConsumerGroup(ctx, "slow")
	require.NoError(t, err)
	require.Len(t, g.Queues, 1)
	q := g.Queues[0]
	assert.Equal(t, int64(5), q.Lag)
	assert.Equal(t, 30*time.Second, q.TimeLag)
	require.Len(t, q.Partitions, 3)
	p1 := q.Partitions[2]
	assert.Equal(t, "p1", p1.Partition)
	assert.NotEmpty(t, p1.PartitionID)
	assert.Equal(t, int64(-1), p1.Cursor)
	assert.Equal(t, int64(3), p1.Lag)
	assert.Equal(t, int64(2), p1.Processing)
	assert.True(t, p1.Leased)
	assert.NotEmpty(t, p1.LeaseID)
	assert.Equal(t, int64(1), q.Partitions[1].Cursor)

	_, err = f.admin.ConsumerGroup(ctx, "nobody")
	assert.ErrorIs(t, err, admin.ErrNotFound)
	_, err = f.admin.ConsumerGroup(ctx, "")
	assert.ErrorIs(t, err, queen.ErrInvalidOption)

	lag, err := f.admin.Lagging(ctx, admin.LagQuery{Group: "slow"})
	require.NoError(t, err)
	require.Len(t, lag, 2)
	assert.Equal(t, "p0", lag[0].Partition)
	assert.Equal(t, 30*time.Second, lag[0].TimeLag)
	none, err := f.admin.Lagging(ctx, admin.LagQuery{MinLag: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = f.admin.Lagging(ctx, admin.LagQuery{MinLag: -time.Second})
	assert.ErrorIs(t, err, queen.ErrInvalidOption)
}

func TestMessagesPeeksWithoutLeasing(t *testing.T) {
	t.Parallel()
	f := lagState(t)
	ctx := context.Background()
	msgs, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Partition: "p1"})
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	assert.Equal(t, int64(2), msgs[0].Offset, "newest first")
	assert.JSONEq(t, `{"n":2}`, string(msgs[0].Data))
	assert.Equal(t, "p1", msgs[0].Partition)
	assert.Equal(t, "pending", msgs[0].Status)

	oldest, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Limit: 2, Offset: 1, Oldest: true})
	require.NoError(t, err)
	require.Len(t, oldest, 2)
	assert.Equal(t, []int64{1, 2}, []int64{oldest[0].Offset, oldest[1].Offset})

	one, err := f.admin.Message(ctx, msgs[0].PartitionID, msgs[0].TransactionID)
	require.NoError(t, err)
	assert.Equal(t, msgs[0].ID, one.ID)
	_, err = f.admin.Message(ctx, msgs[0].PartitionID, "nope")
	assert.ErrorIs(t, err, admin.ErrNotFound)

	for _, bad := range []admin.MessageQuery{{}, {Queue: "orders", Limit: 1001}, {Queue: "orders", Offset: -1}, {Queue: "orders", Status: "failed"}} {
		_, err := f.admin.Messages(ctx, bad)
		assert.ErrorIs(t, err, queen.ErrInvalidOption, "%+v", bad)
	}
	_, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "nope"})
	assert.ErrorIs(t, err, admin.ErrNotFound)
	_, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "orders", Partition: "p9"})
	assert.ErrorIs(t, err, admin.ErrNotFound)

	// The peek leased nothing: a fresh group still gets p1's messages on first delivery.
	got, err := f.client.Queue("orders").Partition("p1").Group("fresh").SubscriptionMode(queen.SubscribeAll).Batch(10).Pop(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, 1, got[0].DeliveryAttempt)
}

func TestOverviewAndHealth(t *testing.T) {
	t.Parallel()
	f := lagState(t)
	ctx := context.Background()
	o, err := f.admin.Overview(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), o.Queues)
	assert.Equal(t, int64(3), o.Partitions)
	assert.Equal(t, int64(7), o.Messages)
	assert.Equal(t, float64(3), o.MaxLag)
	assert.Equal(t, 30*time.Second, o.MaxTimeLag)
	assert.False(t, o.Approximate)
	h, err := f.admin.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, "healthy", h.Status)
	assert.NotEmpty(t, h.Version)
}

// BenchmarkConsumerGroups reads the group list of a broker with 100 groups on one queue of
// 1,000 partitions, each group with a cursor in every partition and one message behind in each.
func BenchmarkConsumerGroups(b *testing.B) {
	srv := queentest.NewServer(b)
	client, err := queen.New(srv.URL())
	require.NoError(b, err)
	b.Cleanup(func() { _ = client.Close() })
	a := admin.New(client)
	ctx := context.Background()
	items := make([]queen.PushItem, 1000)
	for i := range items {
		items[i] = queen.PushItem{Data: i, Partition: fmt.Sprintf("p%03d", i)}
	}
	_, err = client.Queue("wide").Push(ctx, items...)
	require.NoError(b, err)
	for g := range 100 {
		require.NoError(b, a.SeekConsumerGroup(ctx, fmt.Sprintf("g%03d", g), "wide", admin.SeekToEnd()))
	}
	_, err = client.Queue("wide").Push(ctx, items...)
	require.NoError(b, err)
	for b.Loop() {
		groups, err := a.ConsumerGroups(ctx)
		if err != nil || len(groups) != 100 || groups[0].Queues[0].Lag != 1000 {
			b.Fatalf("%d groups, %v", len(groups), err)
		}
	}
}

// The same reads against the reference broker in its 0.15 mode.
func TestIntrospectionAgainstThe015Mode(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock(), queentest.WithCompat("0.15"))
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	a := admin.New(client)
	ctx := context.Background()
	_, err = client.Queue("orders").Push(ctx, queen.PushItem{Data: 1}, queen.PushItem{Data: 2})
	require.NoError(t, err)
	msgs, err := client.Queue("orders").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(1).Pop(ctx)
	require.NoError(t, err)
	require.NoError(t, msgs[0].Ack(ctx))
	srv.Advance(10 * time.Second)

	qs, err := a.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, int64(2), qs[0].Messages)
	info, err := a.QueueInfo(ctx, "orders")
	require.NoError(t, err)
	assert.Len(t, info.Partitions, 1)
	groups, err := a.ConsumerGroups(ctx)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	g, err := a.ConsumerGroup(ctx, "g")
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Queues[0].Partitions[0].Lag)
	peek, err := a.Messages(ctx, admin.MessageQuery{Queue: "orders"})
	require.NoError(t, err)
	require.Len(t, peek, 2)
	assert.JSONEq(t, "2", string(peek[0].Data))
	_, err = a.ConsumerGroup(ctx, "nobody")
	assert.ErrorIs(t, err, admin.ErrNotFound)
	_, err = a.QueueInfo(ctx, "nope")
	assert.ErrorIs(t, err, admin.ErrNotFound)
}

// A group named lagging shares its path with the lagging list: it is described from the list.
func TestConsumerGroupNamedLagging(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.admin.ConsumerGroup(ctx, "lagging")
	assert.ErrorIs(t, err, admin.ErrNotFound)
	f.push(t, "q", "", 1, 2)
	require.Len(t, f.pop(t, "q", "lagging", 1), 1)
	g, err := f.admin.ConsumerGroup(ctx, "lagging")
	require.NoError(t, err)
	require.Len(t, g.Queues, 1)
	assert.Equal(t, int64(2), g.Queues[0].Lag)
	assert.Nil(t, g.Queues[0].Partitions)
}

// FromOffset pages one partition without missing or repeating messages pushed meanwhile.
func TestMessagesFromOffset(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.push(t, "q", "p", 0, 1, 2, 3)
	from := int64(1)
	page, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &from, Oldest: true, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, []int64{page[0].Offset, page[1].Offset})
	f.push(t, "q", "p", 4)
	next := page[1].Offset + 1
	page, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &next, Oldest: true, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, []int64{page[0].Offset, page[1].Offset})
	down, err := f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &from})
	require.NoError(t, err)
	assert.Len(t, down, 2, "newest first from offset 1: 1 and 0")

	_, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", FromOffset: &from})
	assert.ErrorIs(t, err, queen.ErrInvalidOption)
	neg := int64(-1)
	_, err = f.admin.Messages(ctx, admin.MessageQuery{Queue: "q", Partition: "p", FromOffset: &neg})
	assert.ErrorIs(t, err, queen.ErrInvalidOption)
}
