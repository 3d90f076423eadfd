package wire_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/wire"
)

// capture015 reads an introspection answer captured from a real 0.15 broker, kept verbatim in
// testdata.
func capture015(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "introspection015", name))
	require.NoError(t, err)
	return bytes.TrimSuffix(b, []byte("\n"))
}

// excerpt015 reads an excerpt capture: one byte-exact element per line.
func excerpt015(t *testing.T, name string) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(capture015(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	require.NoError(t, sc.Err())
	return out
}

func ms(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestQueueList015Decodes(t *testing.T) {
	t.Parallel()
	var l wire.QueueList
	require.NoError(t, wire.Unmarshal(capture015(t, "queues-by-namespace-after-stats.json"), &l))
	require.Len(t, l.Queues, 2)
	assert.Nil(t, l.Total, "0.15 sends no total")
	assert.Equal(t, wire.Pagination{Limit: 100}, l.Pagination)
	q := l.Queues[1]
	assert.Equal(t, "spec-insp-115691", q.Name)
	assert.Equal(t, "spec-ns", q.Namespace)
	assert.Equal(t, int64(4), q.Partitions)
	assert.Equal(t, ms("2026-12-01T09:01:31.059Z"), q.CreatedAt.Time)
	assert.Equal(t, wire.SummaryCounts{Total: 11, Pending: 9, Processing: 4}, q.Messages)
}

func TestQueueDetail015Decodes(t *testing.T) {
	t.Parallel()
	var d wire.QueueDetail
	require.NoError(t, wire.Unmarshal(capture015(t, "queue-detail-after-stats.json"), &d))
	assert.Equal(t, int64(600), d.Queue.Config.LeaseTime)
	assert.Equal(t, int64(1), d.Queue.Config.RetryLimit)
	assert.Equal(t, int64(1000), *d.Queue.Config.RetryDelay)
	assert.Nil(t, d.Queue.Options, "options are 2.0")
	require.Len(t, d.Partitions, 4)
	p0 := d.Partitions[1]
	assert.Equal(t, "p0", p0.Name)
	assert.Nil(t, p0.LastOffset)
	assert.Equal(t, wire.Counts{Total: 5, Pending: 4, Processing: 2, Completed: 5, DeadLetter: 1}, p0.Messages)
	assert.Equal(t, int64(28), p0.Cursor.TotalConsumed)
	assert.Equal(t, ms("2026-12-01T09:01:34.553Z"), p0.LastActivity.Value())
	assert.Nil(t, d.Partitions[0].NewestMessage)
	assert.Equal(t, int64(11), d.Totals.Total)
	assert.Equal(t, int64(9), d.Totals.Messages.Pending)
}

func TestGroupRoutes015Decode(t *testing.T) {
	t.Parallel()
	for _, line := range excerpt015(t, "groups.ndjson") {
		var g wire.GroupSummary
		require.NoError(t, wire.Unmarshal(line, &g))
		assert.Nil(t, g.TotalLag, "0.15 sends totalLag null")
		assert.Nil(t, g.Conflation)
		assert.Equal(t, []string{g.QueueName}, g.Topics)
	}
	var gc wire.GroupSummary
	require.NoError(t, wire.Unmarshal(excerpt015(t, "groups.ndjson")[3], &gc))
	assert.Equal(t, "new", *gc.SubscriptionMode)
	assert.Equal(t, ms("2026-12-01T09:01:31.137Z"), gc.SubscriptionTimestamp.Value())

	var d wire.GroupDetail
	require.NoError(t, wire.Unmarshal(capture015(t, "group-gB-lagging.json"), &d))
	ps := d["spec-insp-115691"].Partitions
	require.Len(t, ps, 2)
	assert.Equal(t, "p1", ps[1].Partition)
	assert.True(t, ps[1].LeaseActive)
	assert.Equal(t, "01a230d6-76d6-7000-bfe1-f98628166f2a", *ps[1].WorkerID)
	assert.Nil(t, ps[1].LastConsumedAt)
	assert.Nil(t, ps[1].Cursor)
	assert.Nil(t, ps[1].PartitionID)
	assert.Equal(t, int64(3), ps[1].OffsetLag)
	assert.Equal(t, int64(25), ps[1].TimeLagSeconds)

	var qm wire.GroupDetail
	member := excerpt015(t, "group-queue-mode.ndjson")[0]
	require.NoError(t, wire.Unmarshal(append(append([]byte("{"), member...), '}'), &qm))
	assert.Equal(t, int64(4), qm["spec-insp-115691"].Partitions[0].OffsetLag)

	for _, line := range excerpt015(t, "lagging-min-300s.ndjson") {
		var e wire.LaggingEntry
		require.NoError(t, wire.Unmarshal(line, &e))
		assert.Equal(t, 0.09, e.LagHours)
		assert.Greater(t, e.TimeLagSeconds, int64(300))
		assert.False(t, e.OldestUnconsumedAt.Value().IsZero())
	}
}

func TestMessages015Decode(t *testing.T) {
	t.Parallel()
	var l wire.MessageList
	require.NoError(t, wire.Unmarshal(capture015(t, "messages-by-partition.json"), &l))
	require.Len(t, l.Messages, 5)
	m := l.Messages[0]
	assert.Equal(t, "p0-4", m.TransactionID)
	assert.Nil(t, m.Offset, "0.15 sends no offset")
	assert.Nil(t, m.Payload)
	assert.Equal(t, "processing", m.Status)
	assert.Equal(t, ms("2026-12-01T09:11:31.410Z"), m.LeaseExpiresAt.Value())
	assert.Equal(t, wire.MessageMode{HasQueueMode: true, BusGroupsCount: 3, Type: "hybrid"}, l.Mode)

	var d wire.MessageDetail
	require.NoError(t, wire.Unmarshal(capture015(t, "message-dead-lettered-in-queue-mode.json"), &d))
	assert.Equal(t, "p0-0", d.TransactionID)
	assert.JSONEq(t, `{"i":0,"p":"p0"}`, string(d.Payload))
	assert.Equal(t, "", *d.ErrorMessage)
	assert.Equal(t, int64(1), *d.RetryCount)
	assert.Equal(t, int64(2), *d.Mode.ConsumedByGroups)
	require.Len(t, d.ConsumerGroups, 4)
	assert.Nil(t, d.ConsumerGroups[0].Status)
	assert.Nil(t, d.ConsumerGroups[0].DeliveryAttempt)

	var nf struct {
		Error string `json:"error"`
	}
	require.NoError(t, wire.Unmarshal(capture015(t, "message-unknown.json"), &nf))
	assert.Equal(t, "Message not found", nf.Error)
}

func TestHealthAndOverview015Decode(t *testing.T) {
	t.Parallel()
	var h wire.Health
	require.NoError(t, wire.Unmarshal(capture015(t, "health.json"), &h))
	assert.Equal(t, wire.Health{Database: "connected", Server: "C++ Queen Server (libqueen)", Status: "healthy", Version: "1.0.0"}, h)
	var o wire.Overview
	require.NoError(t, wire.Unmarshal(capture015(t, "overview.json"), &o))
	assert.Equal(t, int64(295), o.Queues)
	assert.Equal(t, float64(2447), o.Lag.Time.Median)
	assert.Equal(t, int64(62565), o.Messages.Completed)
}

// The reference broker's shapes carry every key, absent values as null, timestamps with
// microseconds; payload only when set.
func TestIntrospectionEncodesEveryKey(t *testing.T) {
	t.Parallel()
	at := ms("2026-11-29T21:33:13.4270691Z")
	b, err := wire.Marshal(wire.GroupPartition{Partition: "p1", LastConsumedAt: wire.AtOrNil(at)})
	require.NoError(t, err)
	assert.Equal(t, `{"partition":"p1","partitionId":null,"cursor":null,"offsetLag":0,"pending":null,"processing":null,`+
		`"timeLagSeconds":0,"leaseActive":false,"workerId":null,"leaseExpiresAt":null,`+
		`"lastConsumedAt":"2026-11-29T21:33:13.427069Z","totalConsumed":0,"retries":null}`, string(b))

	b, err = wire.Marshal(wire.QueueTotals{Counts: wire.Counts{Total: 2}})
	require.NoError(t, err)
	assert.Equal(t, `{"messages":{"total":0,"pending":0,"processing":0,"completed":0,"failed":0,"deadLetter":0},`+
		`"total":2,"pending":0,"processing":0,"completed":0,"failed":0,"deadLetter":0}`, string(b))

	b, err = wire.Marshal(wire.MessageList{})
	require.NoError(t, err)
	assert.Equal(t, `{"messages":[],"mode":{"hasQueueMode":false,"busGroupsCount":0,"type":""}}`, string(b))

	var keys map[string]any
	b, err = wire.Marshal(wire.MessageDetail{MessageEntry: wire.MessageEntry{Payload: wire.Value(`{"a":1}`)}})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &keys))
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	assert.Equal(t, []string{"busStatus", "consumerGroups", "createdAt", "errorMessage", "id", "isEncrypted",
		"leaseExpiresAt", "mode", "namespace", "offset", "partition", "partitionId", "payload", "producerSub",
		"queue", "queueConfig", "queuePath", "queuePriority", "queueStatus", "retryCount", "status", "task",
		"traceId", "transactionId"}, got)
}

func TestTimeReadsAnyRFC3339(t *testing.T) {
	t.Parallel()
	var v struct {
		A wire.Time  `json:"a"`
		B *wire.Time `json:"b"`
		C wire.Time  `json:"c"`
	}
	require.NoError(t, wire.Unmarshal([]byte(`{"a":"2026-12-01T10:01:31.103+01:00","b":null,"c":null}`), &v))
	assert.Equal(t, ms("2026-12-01T09:01:31.103Z"), v.A.Time)
	assert.Nil(t, v.B)
	assert.True(t, v.C.IsZero())
	assert.Error(t, wire.Unmarshal([]byte(`{"a":"yesterday"}`), &v))
	assert.Error(t, wire.Unmarshal([]byte(`{"a":12}`), &v))
}
