package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

func TestQueueConfigure(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")

	r := queenctl(t, b.env, "queue", "configure", "orders", "--lease-time", "30s", "--retry-limit", "5", "--no-dlq", "--namespace", "shop", "--task", "bill")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 8, r.stdout)
	assert.Equal(t, "queue orders: created", lines[0])
	assert.Equal(t, "queue orders: changed lease time: 1m0s -> 30s", lines[1])
	assert.Equal(t, "queue orders: changed dead-letter queue: on -> off", lines[3])
	assert.Equal(t, []string{"QUEUE", "LEASE", "TIME", "RETRY", "LIMIT", "DEAD-LETTER", "QUEUE", "NAMESPACE", "TASK"}, strings.Fields(lines[6]))
	assert.Equal(t, []string{"orders", "30s", "5", "off", "shop", "bill"}, strings.Fields(lines[7]))

	r = queenctl(t, b.env, "queue", "configure", "orders", "--retry-limit", "0", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "queue orders: would change retry limit: 5 -> 0\ndry run: nothing changed\n", r.stdout)

	r = queenctl(t, b.env, "--json", "queue", "configure", "orders", "--retry-limit", "0")
	require.Equal(t, exitOK, r.code, r.stderr)
	var cfg struct {
		Queue            string
		LeaseTimeSeconds int
		RetryLimit       int
		DeadLetterQueue  bool
		Namespace        string
		Changes          []change
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &cfg))
	assert.Equal(t, "orders", cfg.Queue)
	assert.Equal(t, 30, cfg.LeaseTimeSeconds, "read, merge, write: the lease time stays")
	assert.Equal(t, 0, cfg.RetryLimit, "--retry-limit 0 is sent, not dropped")
	assert.False(t, cfg.DeadLetterQueue)
	assert.Equal(t, "shop", cfg.Namespace)
	assert.Equal(t, []change{{Field: "retry limit", From: "5", To: "0"}}, cfg.Changes)

	r = queenctl(t, b.env, "queue", "configure", "orders", "--dlq")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "changed dead-letter queue: off -> on")
	r = queenctl(t, b.env, "queue", "configure", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "nothing to change")
	assert.Equal(t, exitUsage, queenctl(t, b.env, "queue", "configure", "orders", "--dlq", "--no-dlq").code)
}

func TestDLQList(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)

	r := queenctl(t, b.env, "dlq", "list", "--queue", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, []string{"ID", "QUEUE", "PARTITION", "GROUP", "RETRIES", "FAILED", "AT", "ERROR"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"orders", "Default", "billing", "0"}, strings.Fields(lines[1])[1:5])
	assert.Contains(t, lines[1], `poison {"n":`)
	assert.Equal(t, "3 of 3 dead letters (offset 0)", lines[4])

	r = queenctl(t, b.env, "dlq", "list", "--queue", "orders", "--group", "billing", "--limit", "2", "--offset", "1", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var page admin.DLQPage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, 3, page.Total)
	assert.Equal(t, 2, page.Limit)
	assert.Equal(t, 1, page.Offset)
	require.Len(t, page.DeadLetters, 2)
	assert.Equal(t, "billing", page.DeadLetters[0].ConsumerGroup)

	r = queenctl(t, b.env, "dlq", "list", "--queue", "elsewhere")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "0 of 0 dead letters (offset 0)\n", r.stdout)
}

func deadLetterIDs(t *testing.T, b broker, queue string) []string {
	t.Helper()
	r := queenctl(t, b.env, "dlq", "list", "--queue", queue, "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var page admin.DLQPage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	ids := make([]string, len(page.DeadLetters))
	for i, dl := range page.DeadLetters {
		ids[i] = dl.ID
	}
	return ids
}

func TestDLQReplayByID(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)
	ids := deadLetterIDs(t, b, "orders")
	require.Len(t, ids, 3)

	r := queenctl(t, b.env, "dlq", "replay", ids[0], ids[1])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "replayed "+ids[0]+" as dlq:"+ids[0])
	assert.Contains(t, r.stdout, "replayed "+ids[1]+" as dlq:"+ids[1])
	assert.Contains(t, r.stdout, "replay: 2 of 2 succeeded")
	assert.NotContains(t, r.stdout, "\r", "no progress bar on a pipe")
	assert.Equal(t, []string{ids[2]}, deadLetterIDs(t, b, "orders"))

	copies := b.pop(t, "orders", "shipping")
	require.Len(t, copies, 5, "3 originals and 2 copies for a group that never failed them")

	// A replayed id is gone: the command reports it and exits 1, the rest still succeeds.
	r = queenctl(t, b.env, "dlq", "replay", "--json", ids[0], ids[2])
	assert.Equal(t, exitFailure, r.code)
	var outcomes []struct {
		ID     string
		Result *admin.Replayed
		Error  string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &outcomes))
	require.Len(t, outcomes, 2)
	assert.Equal(t, ids[0], outcomes[0].ID)
	assert.Contains(t, outcomes[0].Error, "not found")
	assert.Nil(t, outcomes[0].Result)
	require.NotNil(t, outcomes[1].Result)
	assert.Equal(t, "dlq:"+ids[2], outcomes[1].Result.TransactionID)
	assert.Contains(t, r.stderr, "replay "+ids[0])
	assert.Empty(t, deadLetterIDs(t, b, "orders"))
}

func TestDLQReplayAll(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)
	b.fileDeadLetters(t, "orders", "shipping", 4)
	b.fileDeadLetters(t, "other", "billing", 5)

	r := queenctl(t, b.env, "dlq", "replay", "--queue", "orders", "--group", "billing", "--all")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, 3, strings.Count(r.stdout, "replayed "))
	assert.Contains(t, r.stdout, "replay: 3 of 3 succeeded")
	assert.Len(t, deadLetterIDs(t, b, "orders"), 1, "shipping's dead letter stays")

	r = queenctl(t, b.env, "dlq", "replay", "--all", "--queue", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "replay: 1 of 1 succeeded")
	assert.Empty(t, deadLetterIDs(t, b, "orders"))
	assert.Len(t, deadLetterIDs(t, b, "other"), 1)

	r = queenctl(t, b.env, "dlq", "replay", "--all", "--queue", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "no dead letters to replay\n", r.stdout)
}

func TestDLQDelete(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1, 2)
	ids := deadLetterIDs(t, b, "orders")

	r := queenctl(t, b.env, "dlq", "delete", ids[0])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "deleted "+ids[0])
	assert.Equal(t, ids[1:], deadLetterIDs(t, b, "orders"))

	r = queenctl(t, b.env, "dlq", "delete", ids[0])
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, ids[0])
	assert.Contains(t, r.stderr, "not found")
}

func TestSeek(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2)
	b.srv.Advance(time.Minute)
	at := b.srv.Now()
	b.push(t, "orders", 3)
	require.Len(t, b.pop(t, "orders", "billing"), 3)

	r := queenctl(t, b.env, "seek", "--group", "billing", "--queue", "orders", "--to", at.UTC().Format(time.RFC3339Nano))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "moved consumer group billing on queue orders to "+at.UTC().Format(time.RFC3339Nano)+" (partitions updated: 1)")
	again := b.pop(t, "orders", "billing")
	require.Len(t, again, 1)
	assert.JSONEq(t, `{"n":3}`, string(again[0].Data))

	r = queenctl(t, b.env, "seek", "--json", "--group", "billing", "--queue", "orders", "--to-end")
	require.Equal(t, exitOK, r.code, r.stderr)
	var res admin.SeekResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.True(t, res.ToEnd)
	assert.Equal(t, "orders", res.Queue)
	assert.Empty(t, b.pop(t, "orders", "billing"))

	r = queenctl(t, b.env, "seek", "--group", "billing", "--queue", "nope", "--to-end")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `"nope"`)
	assert.Contains(t, r.stderr, "not found")
}

func TestQueueAndGroupDelete(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)
	b.push(t, "invoices", 2)
	require.Len(t, b.pop(t, "orders", "billing"), 1)
	require.Len(t, b.pop(t, "invoices", "billing"), 1)

	r := queenctl(t, b.env, "group", "delete", "billing", "--queue", "invoices")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "deleted consumer group billing on queue invoices\n", r.stdout)

	r = queenctl(t, b.env, "group", "delete", "--json", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	var g struct {
		ConsumerGroup string
		Deleted       bool
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &g))
	assert.Equal(t, "billing", g.ConsumerGroup)
	assert.True(t, g.Deleted)

	r = queenctl(t, b.env, "group", "delete", "billing")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `"billing"`)

	r = queenctl(t, b.env, "queue", "delete", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "deleted queue orders\n", r.stdout)

	r = queenctl(t, b.env, "queue", "delete", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `queue delete "orders"`)
	assert.Contains(t, r.stderr, "not found")
}

func TestServerAndTokenFromFlagsOrEnvironment(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	b := newBroker(t, token)

	r := queenctl(t, b.env, "queue", "configure", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "401")

	env := map[string]string{"QUEEN_URL": b.srv.URL(), "QUEEN_TOKEN": token}
	r = queenctl(t, env, "queue", "configure", "orders")
	assert.Equal(t, exitOK, r.code, r.stderr)

	r = queenctl(t, nil, "--server", b.srv.URL(), "--token", token, "queue", "delete", "orders")
	assert.Equal(t, exitOK, r.code, r.stderr)

	r = queenctl(t, map[string]string{"QUEEN_URL": "http://127.0.0.1:1"}, "queue", "configure", "orders", "--server", b.srv.URL(), "--token", "wrong")
	assert.Equal(t, exitFailure, r.code)
	assert.NotContains(t, r.stderr, "wrong")

	r = queenctl(t, nil, "queue", "configure", "--help")
	assert.NotContains(t, r.stdout, token)
}
