package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
)

// lagBroker: queue orders with 3 messages and queue other with 1; group billing finished the
// first of orders and is 2 behind; 90 s later.
func lagBroker(t *testing.T) broker {
	t.Helper()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2, 3)
	b.push(t, "other", 9)
	msgs, err := b.client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Batch(1).Pop(context.Background())
	require.NoError(t, err)
	require.NoError(t, msgs[0].Ack(context.Background()))
	b.srv.Advance(90 * time.Second)
	return b
}

func fields(line string) []string { return strings.Fields(line) }

func TestStatus(t *testing.T) {
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

func TestQueueListAndShow(t *testing.T) {
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

func TestGroupListAndShow(t *testing.T) {
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

func TestMessagesPeekLeasesNothing(t *testing.T) {
	t.Parallel()
	b := lagBroker(t)
	r := queenctl(t, b.env, "messages", "peek", "orders", "--limit", "2")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, []string{"Default", "2"}, fields(lines[1])[1:3])
	assert.Contains(t, lines[1], `{"n":3}`)

	r = queenctl(t, b.env, "messages", "peek", "orders", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var out []messageLine
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out, 3)
	assert.JSONEq(t, `{"n":1}`, string(out[2].Data))
	assert.Equal(t, "pending", out[0].Status)

	msgs := b.pop(t, "orders", "fresh")
	require.Len(t, msgs, 3)
	assert.Equal(t, 1, msgs[0].DeliveryAttempt, "the peek delivered nothing")

	for _, bad := range [][]string{{"messages", "peek"}, {"messages", "peek", "orders", "--limit", "0"}, {"messages", "nope"}} {
		assert.Equal(t, exitUsage, queenctl(t, b.env, bad...).code, bad)
	}
	r = queenctl(t, b.env, "messages", "peek", "nope")
	assert.Equal(t, exitFailure, r.code)
}

func TestDLQShow(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 7)
	page, err := b.adminClient().DeadLetters(context.Background(), adminDLQ("orders"))
	require.NoError(t, err)
	id := page.DeadLetters[0].ID
	r := queenctl(t, b.env, "dlq", "show", id)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "poison")
	assert.Contains(t, r.stdout, `{"n":7}`)
	r = queenctl(t, b.env, "dlq", "show", id, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"id": "`+id+`"`)
	r = queenctl(t, b.env, "dlq", "show", "nope")
	assert.Equal(t, exitFailure, r.code)
	assert.Equal(t, exitUsage, queenctl(t, b.env, "dlq", "show").code)
}

func TestPingAndVersion(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "tok")
	r := queenctl(t, b.env, "ping")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "healthy (queen-go reference broker")
	r = queenctl(t, b.env, "version", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var v struct{ Client, BrokerStatus, BrokerVersion string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, "healthy", v.BrokerStatus)
	assert.NotEmpty(t, v.Client)
	r = queenctl(t, nil, "--version")
	assert.Equal(t, exitOK, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "queenctl "))
}

// Exit 3 when nothing answers; 1 when something answers no; errors as JSON with --json; a
// 404 page from something that is not a Queen broker says so.
func TestUnreachableAndNotQueen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	env := map[string]string{"QUEEN_URL": dead}
	for _, args := range [][]string{{"ping"}, {"status"}, {"queue", "list"}, {"lag", "--min", "1"}, {"messages", "peek", "q"}, {"version"},
		{"push", "q", "--data", "1"}, {"push", "q", "--data", "1 2"}, {"tail", "q"}} {
		r := queenctl(t, env, args...)
		assert.Equal(t, exitOffline, r.code, "%v: %s", args, r.stderr)
	}
	r := queenctl(t, env, "--json", "ping")
	assert.Equal(t, exitOffline, r.code)
	var e struct {
		Error string
		Exit  int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	assert.Equal(t, exitOffline, e.Exit)
	assert.NotEmpty(t, e.Error)

	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	r = queenctl(t, map[string]string{"QUEEN_URL": web.URL}, "queue", "list")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "is QUEEN_URL a Queen broker?")

	r = queenctl(t, nil, "--json", "status", "extra")
	assert.Equal(t, exitUsage, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	assert.Equal(t, exitUsage, e.Exit)
}
