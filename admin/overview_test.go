package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
)

// Lagging lists the (group, partition) pairs whose oldest owed message is older than asked,
// most lagging first and then by partition.
func TestLaggingListsThePartitionsBehindMostLaggingFirst(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		ctx := context.Background()
		lag, err := f.admin.Lagging(ctx, admin.LagQuery{Group: "slow"})
		require.NoError(t, err)
		require.Len(t, lag, 2)
		assert.Equal(t, "p0", lag[0].Partition)
		assert.Equal(t, "slow", lag[0].Group)
		assert.Equal(t, 30*time.Second, lag[0].TimeLag)
		assert.Equal(t, int64(2), lag[0].Lag)
		assert.NotEmpty(t, lag[1].LeaseID, "p1 is leased")
		none, err := f.admin.Lagging(ctx, admin.LagQuery{MinLag: time.Minute})
		require.NoError(t, err)
		assert.Empty(t, none)
	})
}

// A 0.15 lagging list ignores the filters and has no stable order: both are applied here. An
// empty answer is an empty list.
func TestLaggingFiltersAndSortsWhatA015BrokerDoesNot(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/consumer-groups/lagging", func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("minLagSeconds") == "3600" {
			return httpmock.NewStringResponse(200, capture015(t, "lagging-default.json")), nil
		}
		return httpmock.NewStringResponse(200, excerptArray(t, "lagging-min-negative.ndjson")), nil
	})
	lag, err := a.Lagging(context.Background(), admin.LagQuery{MinLag: 22 * time.Second, Group: "spec-gC"})
	require.NoError(t, err)
	var got []string
	for _, l := range lag {
		got = append(got, l.Partition)
	}
	assert.Equal(t, []string{"p0", "p1"}, got, "p2's 22 s is not above 22 s; ties by partition")
	none, err := a.Lagging(context.Background(), admin.LagQuery{MinLag: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, none)
}

// Overview adds up the broker's stores and lags; Health is the broker's account of itself.
func TestOverviewAndHealthDescribeTheBroker(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := lagState(t, mode)
		ctx := context.Background()
		o, err := f.admin.Overview(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), o.Queues)
		assert.Equal(t, int64(3), o.Partitions)
		assert.Equal(t, int64(7), o.Messages)
		assert.Equal(t, float64(3), o.MaxLag)
		assert.Equal(t, 30*time.Second, o.MaxTimeLag)
		assert.False(t, o.Approximate, "the reference broker's statistics are live")
		h, err := f.admin.Health(ctx)
		require.NoError(t, err)
		assert.Equal(t, "healthy", h.Status)
		assert.NotEmpty(t, h.Version)
	})
}

// A 0.15 broker's health and overview pass through; its overview, built from statistics of
// some age, is marked approximate.
func TestHealthAndOverviewFrom015PassThrough(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/health", httpmock.NewStringResponder(200, capture015(t, "health.json")))
	mt.RegisterResponder("GET", broker+"/api/v1/resources/overview", httpmock.NewStringResponder(200, capture015(t, "overview.json")))
	h, err := a.Health(context.Background())
	require.NoError(t, err)
	assert.Equal(t, admin.Health{Status: "healthy", Version: "1.0.0", Server: "C++ Queen Server (libqueen)", Database: "connected"}, h)
	o, err := a.Overview(context.Background())
	require.NoError(t, err)
	assert.True(t, o.Approximate)
	assert.Equal(t, int64(62565), o.Completed)
	assert.Equal(t, 2447*time.Second, o.MedianTimeLag)
}

// A lagging list longer than a page (1,000 entries) is read whole: page by page from a 2.0
// broker, at once from a 0.15 one.
func TestLaggingReadsEveryPage(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		const n = 1100
		items := make([]queen.PushItem, n)
		for i := range items {
			items[i] = queen.PushItem{Partition: fmt.Sprintf("p%04d", i), Data: map[string]int{"n": i}}
		}
		_, err := f.client.Queue("wide").Push(ctx, items...)
		require.NoError(t, err)
		// A group reading from a time before every message owes each partition its message (0.15
		// keeps a row for such a start in every partition that has one).
		_, err = f.client.Queue("wide").Group("late").SubscriptionFrom(f.srv.Now().Add(-time.Hour)).Pop(ctx)
		require.NoError(t, err)
		f.srv.Advance(time.Minute)
		lag, err := f.admin.Lagging(ctx, admin.LagQuery{MinLag: time.Second, Group: "late"})
		require.NoError(t, err)
		require.Len(t, lag, n)
		for i, l := range lag {
			require.Equal(t, fmt.Sprintf("p%04d", i), l.Partition, "ties by partition, each once")
		}
	})
}
