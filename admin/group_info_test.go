package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// ConsumerGroups lists each group's lag on every queue it reads, by group name. A 0.15 broker
// sends no total lag: it is unknown (-1), and the queue marked approximate.
func TestConsumerGroupsReportLagPerQueue(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		groups, err := f.admin.ConsumerGroups(context.Background())
		require.NoError(t, err)
		require.Len(t, groups, 2)
		assert.Equal(t, "__QUEUE_MODE__", groups[0].Name)
		slow := groups[1]
		assert.Equal(t, "slow", slow.Name)
		require.Len(t, slow.Queues, 1)
		want := admin.GroupQueue{
			Queue: "orders", Lag: 5, TimeLag: 30 * time.Second, PartitionsWithLag: 2, Members: 2,
			State: "Stable", SubscriptionMode: "all",
		}
		if mode.V015 { // no total lag, no subscription mode
			want.Lag, want.SubscriptionMode, want.Approximate = -1, "", true
		}
		assert.Equal(t, want, slow.Queues[0])
	})
}

// ConsumerGroup describes a group partition by partition: its cursor, lag, and live lease. A
// 0.15 broker lists only the partitions where the group has a cursor row, with no cursor
// offset, partition id or counts.
func TestConsumerGroupReportsEachPartition(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		ctx := context.Background()
		g, err := f.admin.ConsumerGroup(ctx, "slow")
		require.NoError(t, err)
		assert.Equal(t, "slow", g.Name)
		require.Len(t, g.Queues, 1)
		q := g.Queues[0]
		assert.Equal(t, int64(5), q.Lag)
		assert.Equal(t, 30*time.Second, q.TimeLag)
		assert.Equal(t, mode.V015, q.Approximate)
		parts := q.Partitions
		if mode.V015 {
			require.Len(t, parts, 2, "only the partitions with a cursor row")
		} else {
			require.Len(t, parts, 3)
			assert.Equal(t, "Default", parts[0].Partition)
			parts = parts[1:]
		}
		p0, p1 := parts[0], parts[1]
		assert.Equal(t, "p0", p0.Partition)
		assert.Equal(t, mode.Offset(1), p0.Cursor)
		assert.Equal(t, int64(2), p0.Lag)
		assert.Equal(t, int64(2), p0.TotalConsumed)
		assert.False(t, p0.LastConsumedAt.IsZero())
		assert.Equal(t, "p1", p1.Partition)
		assert.Equal(t, int64(-1), p1.Cursor)
		assert.Equal(t, int64(3), p1.Lag)
		assert.True(t, p1.Leased)
		assert.NotEmpty(t, p1.LeaseID)
		if mode.V015 {
			assert.Empty(t, p1.PartitionID)
			assert.Equal(t, int64(-1), p1.Processing)
		} else {
			assert.NotEmpty(t, p1.PartitionID)
			assert.Equal(t, int64(2), p1.Processing)
		}

		_, err = f.admin.ConsumerGroup(ctx, "nobody")
		assert.ErrorIs(t, err, admin.ErrNotFound)
	})
}

// A group named lagging shares its path with the lagging list: it is described from the group
// list, without partitions.
func TestAGroupNamedLaggingIsDescribedFromTheGroupList(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		_, err := f.admin.ConsumerGroup(ctx, "lagging")
		assert.ErrorIs(t, err, admin.ErrNotFound)
		f.push(t, "q", "", 1, 2)
		require.Len(t, f.pop(t, "q", "lagging", 1), 1)
		g, err := f.admin.ConsumerGroup(ctx, "lagging")
		require.NoError(t, err)
		require.Len(t, g.Queues, 1)
		assert.Equal(t, int64(unknownOn015(mode, 2)), g.Queues[0].Lag)
		assert.Nil(t, g.Queues[0].Partitions)
	})
}

// A 0.15 group list sends totalLag null, which is unknown (-1), and maxTimeLag as a lower
// bound.
func TestConsumerGroupsFrom015HaveUnknownLag(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/consumer-groups", httpmock.NewStringResponder(200, excerptArray(t, "groups.ndjson")))
	groups, err := a.ConsumerGroups(context.Background())
	require.NoError(t, err)
	require.Len(t, groups, 4)
	gb := groups[2]
	assert.Equal(t, "spec-gB", gb.Name)
	assert.Equal(t, admin.GroupQueue{Queue: "spec-insp-115691", Lag: -1, TimeLag: 25 * time.Second,
		PartitionsWithLag: 2, Members: 2, State: "Stable", Approximate: true}, gb.Queues[0])
	assert.Equal(t, "new", groups[3].Queues[0].SubscriptionMode)
}

// A 0.15 group detail lists only partitions with a cursor row, with no cursor or counts; a
// lease's workerId is shown only while the lease is active; an empty answer is ErrNotFound.
func TestConsumerGroupFrom015ListsOnlyPartitionsWithACursorRow(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/consumer-groups/spec-gB", httpmock.NewStringResponder(200, capture015(t, "group-gB-after-lease-expiry.json")))
	mt.RegisterResponder("GET", broker+"/api/v1/consumer-groups/spec-nobody", httpmock.NewStringResponder(200, capture015(t, "group-unknown.json")))
	g, err := a.ConsumerGroup(context.Background(), "spec-gB")
	require.NoError(t, err)
	require.Len(t, g.Queues, 1)
	q := g.Queues[0]
	assert.True(t, q.Approximate)
	assert.Equal(t, int64(6), q.Lag)
	require.Len(t, q.Partitions, 2)
	assert.Equal(t, admin.PartitionLag{Partition: "p1", Cursor: -1, Lag: 3, TimeLag: 616 * time.Second,
		Pending: -1, Processing: -1, Retries: -1}, q.Partitions[1], "an expired lease's workerId is not shown")

	_, err = a.ConsumerGroup(context.Background(), "spec-nobody")
	assert.ErrorIs(t, err, admin.ErrNotFound)
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

// A group list longer than a page (the broker answers at most 1,000 entries) is read whole,
// page by page on a 2.0 broker, and at once from a 0.15 broker, which ignores paging.
func TestConsumerGroupsReadsEveryPage(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		f.push(t, "wide", "", 1, 2)
		const n = 1100
		for i := range n {
			require.Len(t, f.pop(t, "wide", fmt.Sprintf("g%04d", i), 1), 1)
		}
		groups, err := f.admin.ConsumerGroups(context.Background())
		require.NoError(t, err)
		require.Len(t, groups, n)
		for i, g := range groups {
			require.Equal(t, fmt.Sprintf("g%04d", i), g.Name, "by name, each once")
		}
	})
}

// A broker that ignores limit and offset and holds exactly a page's worth answers the same
// 1,000 entries to the second page's request: they are taken once, and paging stops there.
func TestConsumerGroupsTakeOnceWhatABrokerIgnoringPagesRepeats(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var list strings.Builder
	list.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"name":"g%04d","queueName":"q","topics":["q"],"members":1,"partitionsWithLag":0,`+
			`"totalLag":null,"maxTimeLag":0,"state":"Stable","subscriptionMode":null,"subscriptionTimestamp":null,`+
			`"subscriptionCreatedAt":null}`, i)
	}
	list.WriteString("]")
	calls := 0
	mt.RegisterResponder("GET", broker+"/api/v1/consumer-groups", func(*http.Request) (*http.Response, error) {
		calls++
		return httpmock.NewStringResponse(200, list.String()), nil
	})
	groups, err := a.ConsumerGroups(context.Background())
	require.NoError(t, err)
	assert.Len(t, groups, 1000)
	assert.Equal(t, 2, calls, "the second page, all repeats, ends the reading")
}
