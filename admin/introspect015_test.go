package admin_test

// The introspection calls against a 0.15 broker (SPEC §4 O30–O41), with the byte-exact bodies
// of wire-0.15-introspection.md kept in testdata/introspection015.

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

func capture015(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "introspection015", name))
	require.NoError(t, err)
	return string(bytes.TrimSuffix(b, []byte("\n")))
}

// excerptArray joins an excerpt's byte-exact elements into the array they were cut from.
func excerptArray(t *testing.T, name string) string {
	t.Helper()
	return "[" + strings.ReplaceAll(capture015(t, name), "\n", ",") + "]"
}

const (
	p0ID = "4166a400-c99c-4023-ba82-2b290ea47e34"
	p1ID = "07f80c2c-b60a-4353-9bbd-c12365d46fd8"
)

func ms015(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// O31: 0.15's queue list has no total and no completed or deadLetter counts; they are marked
// approximate and unknown.
func TestQueues015_O31_ApproximateCounts(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1000", r.URL.Query().Get("limit"))
		return httpmock.NewStringResponse(200, capture015(t, "queues-by-namespace-after-stats.json")), nil
	})
	qs, err := a.Queues(context.Background())
	require.NoError(t, err)
	require.Len(t, qs, 2)
	q := qs[1]
	assert.Equal(t, "spec-insp-115691", q.Name)
	assert.Equal(t, int64(4), q.PartitionCount)
	assert.Equal(t, int64(11), q.Messages)
	assert.Equal(t, int64(9), q.Pending)
	assert.Equal(t, int64(-1), q.DeadLetters)
	assert.Equal(t, int64(-1), q.Completed)
	assert.True(t, q.Approximate)
}

// O30, O31: the 0.15 queue detail decodes, marked approximate; "Queue not found" is ErrNotFound.
func TestQueueInfo015_O30_O31(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues/spec-insp-115691", httpmock.NewStringResponder(200, capture015(t, "queue-detail-after-stats.json")))
	mt.RegisterResponder("GET", broker+"/api/v1/status/queues/spec-insp-nope", httpmock.NewStringResponder(200, capture015(t, "queue-detail-unknown.json")))
	info, err := a.QueueInfo(context.Background(), "spec-insp-115691")
	require.NoError(t, err)
	assert.True(t, info.Approximate)
	assert.Equal(t, 600*time.Second, info.Config.LeaseTime)
	assert.Equal(t, 1, info.Config.RetryLimit)
	assert.Equal(t, "67d5272a-d772-49b8-86cf-10a5ea31d5f8", info.Config.PartitionID)
	require.Len(t, info.Partitions, 4)
	p0 := info.Partitions[1]
	assert.Equal(t, admin.PartitionInfo{
		Name: "p0", ID: p0ID, Messages: 5, Newest: ms015("2026-12-01T09:01:34.510Z"),
		Pending: 4, Processing: 2, Completed: 5, DeadLetters: 1, LastOffset: -1,
		Oldest: ms015("2026-12-01T09:01:34.510Z"), LastActivity: ms015("2026-12-01T09:01:34.553Z"),
	}, p0)
	assert.Equal(t, int64(11), info.Messages)
	assert.Equal(t, int64(2), info.DeadLetters)

	_, err = a.QueueInfo(context.Background(), "spec-insp-nope")
	assert.ErrorIs(t, err, admin.ErrNotFound)
}

// O32: totalLag null is unknown (-1), maxTimeLag a lower bound.
func TestConsumerGroups015_O32(t *testing.T) {
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

// O30, O33: group detail lists only partitions with a cursor row, with no cursor or counts;
// workerId shows only while the lease is active; an empty body is ErrNotFound.
func TestConsumerGroup015_O30_O33(t *testing.T) {
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
	p1 := q.Partitions[1]
	assert.Equal(t, admin.PartitionLag{Partition: "p1", Cursor: -1, Lag: 3, TimeLag: 616 * time.Second,
		Pending: -1, Processing: -1, Retries: -1}, p1, "an expired lease's workerId is not shown")

	_, err = a.ConsumerGroup(context.Background(), "spec-nobody")
	assert.ErrorIs(t, err, admin.ErrNotFound)
}

// O34: 0.15's lagging list has no filters and an unstable order; both are applied here. An
// empty body is an empty list.
func TestLagging015_O34(t *testing.T) {
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

// O35: 0.15 lists without payloads or offsets; the payload comes from each message's detail,
// and asking for oldest first is unsupported.
func TestMessages015_O35(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/messages", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1970-01-01T00:00:00Z", r.URL.Query().Get("from"))
		assert.Equal(t, "spec-insp-115691", r.URL.Query().Get("queue"))
		return httpmock.NewStringResponse(200, capture015(t, "messages-by-partition.json")), nil
	})
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-1$`), httpmock.NewStringResponder(200, capture015(t, "message-leased-in-queue-mode.json")))
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-0$`), httpmock.NewStringResponder(200, capture015(t, "message-dead-lettered-in-queue-mode.json")))
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/messages/`+p0ID+`/p0-[234]$`), httpmock.NewStringResponder(200, capture015(t, "message-unknown.json")))
	msgs, err := a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Partition: "p0"})
	require.NoError(t, err)
	require.Len(t, msgs, 5)
	assert.Equal(t, int64(-1), msgs[0].Offset)
	assert.Nil(t, msgs[0].Data, "gone when fetched: no payload invented")
	assert.JSONEq(t, `{"i":1,"p":"p0"}`, string(msgs[3].Data))
	assert.Equal(t, "processing", msgs[3].Status)
	assert.JSONEq(t, `{"i":0,"p":"p0"}`, string(msgs[4].Data))

	_, err = a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Oldest: true})
	assert.ErrorIs(t, err, admin.ErrUnsupported)
	from := int64(0)
	_, err = a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691", Partition: "p0", FromOffset: &from})
	assert.ErrorIs(t, err, admin.ErrUnsupported)
}

// O30: the SQL errors 0.15 answers with 200 are server errors, not results.
func TestMessages015_O30_SQLErrorIsAServerError(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/messages", httpmock.NewStringResponder(200, capture015(t, "messages-from-garbage.json")))
	_, err := a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691"})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
	assert.NotErrorIs(t, err, admin.ErrNotFound)
}

// O38, O39: health and overview pass 0.15's numbers through, marked approximate.
func TestHealthAndOverview015_O38_O39(t *testing.T) {
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

func mustRegexp(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }
