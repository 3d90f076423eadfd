package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// status shows every queue's depth and every group's lag, as tables or JSON.
func TestStatusShowsEveryQueueAndGroup(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "status")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 6, r.stdout)
	assert.Equal(t, []string{"QUEUE", "NAMESPACE", "TASK", "PARTITIONS", "MESSAGES", "PENDING", "PROCESSING", "DEAD", "LETTERS"}, fields(lines[0]))
	assert.Equal(t, []string{"other", "-", "-", "1", "1", "1", "0", "0"}, fields(lines[1]))
	assert.Equal(t, []string{"orders", "-", "-", "1", "3", "2", "0", "0"}, fields(lines[2]))
	assert.Equal(t, []string{"billing", "orders", "2", "1m30s", "1", "Stable"}, fields(lines[5]))

	r = queenctl(t, b.env, "status", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var out struct {
		Queues []queueRow
		Groups []groupRow
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out.Queues, 2)
	assert.Equal(t, []groupRow{{Group: "billing", Queue: "orders", Lag: 2, TimeLagSeconds: 90, PartitionsWithLag: 1, State: "Stable"}}, out.Groups)
}

// queue list and queue show report each queue's depth, and a queue's options and partitions.
func TestQueueListAndShowReportDepth(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "queue", "list", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rows []queueRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 2)
	assert.Equal(t, "orders", rows[1].Queue)

	r = queenctl(t, b.env, "queue", "show", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "lease time 1m0s  retry limit 3  dead-letter queue on")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	assert.Equal(t, []string{"Default", "3", "2", "0", "0", "2"}, fields(lines[len(lines)-1])[:6])

	r = queenctl(t, b.env, "queue", "show", "orders", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var show struct {
		Queue            string
		LeaseTimeSeconds int
		PartitionList    []partitionRow
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
	assert.Equal(t, 60, show.LeaseTimeSeconds)
	require.Len(t, show.PartitionList, 1)
	assert.Equal(t, int64(2), show.PartitionList[0].LastOffset)

	r = queenctl(t, b.env, "queue", "show", "nope")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "not found")
	r = queenctl(t, b.env, "queue", "show")
	assert.Equal(t, exitUsage, r.code)
}

// group list and group show report each group's lag, and a group's cursor and lag per
// partition.
func TestGroupListAndShowReportLag(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "group", "list")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "billing")

	r = queenctl(t, b.env, "group", "show", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, []string{"QUEUE", "PARTITION", "CURSOR", "LAG", "TIME", "LAG", "LEASED"}, fields(lines[0]))
	assert.Equal(t, []string{"orders", "Default", "0", "2", "1m30s", "no"}, fields(lines[1]))

	r = queenctl(t, b.env, "--json", "group", "show", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	var show struct {
		Group      string
		Partitions []partitionLagRow
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
	assert.Equal(t, []partitionLagRow{{Queue: "orders", Partition: "Default", Cursor: 0, Lag: 2, TimeLagSeconds: 90}}, show.Partitions)

	r = queenctl(t, b.env, "group", "show", "nobody")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "not found")
}

// lag exits 1 when a group is more messages or more time behind than the bound given.
func TestLagExitsOneWhenOver(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "lag")
	assert.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "lag", "--min", "2")
	assert.Equal(t, exitOK, r.code, "2 behind is not over 2: %s", r.stderr)
	r = queenctl(t, b.env, "lag", "--min", "1")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stdout, "<- over")
	assert.Contains(t, r.stderr, "1 of 1 group/queue pairs over")
	r = queenctl(t, b.env, "lag", "--min-time", "2m")
	assert.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "lag", "--min-time", "1m", "--json")
	assert.Equal(t, exitFailure, r.code)
	var rows []groupRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	assert.True(t, rows[0].Over)
	r = queenctl(t, b.env, "lag", "--min", "-3")
	assert.Equal(t, exitUsage, r.code)
	r = queenctl(t, b.env, "lag", "--min-time", "soon")
	assert.Equal(t, exitUsage, r.code)
}
