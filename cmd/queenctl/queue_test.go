package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queue configure reads the queue's options, changes only those given, writes them back and
// prints what changed; a dry run prints what would change and changes nothing.
func TestQueueConfigureChangesOnlyTheOptionsGiven(t *testing.T) {
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

// queue delete deletes the queue and says so; a second delete finds nothing and exits 1.
func TestQueueDeleteDeletesAndThenFindsNothing(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1)

	r := queenctl(t, b.env, "queue", "delete", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "deleted queue orders\n", r.stdout)

	r = queenctl(t, b.env, "queue", "delete", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `queue delete "orders"`)
	assert.Contains(t, r.stderr, "not found")
}
