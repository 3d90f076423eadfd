package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

// terminal is a stdin that stands for a person at a terminal.
type terminal struct{ strings.Reader }

func (*terminal) IsTerminal() bool { return true }

func atTerminal(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(context.Background(), args, func(k string) string { return env[k] }, &terminal{}, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestSeekRelativeTimesDryRunAndUnknownGroups(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 1, 2)
	require.Len(t, b.pop(t, "orders", "billing"), 2)
	acked := b.pop(t, "orders", "billing")
	assert.Empty(t, acked, "leased already")

	r := queenctl(t, b.env, "seek", "--group", "billing", "--queue", "orders", "--to-start", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "dry run: would move consumer group billing on queue orders to 1970-01-01T00:00:00Z")
	assert.Empty(t, b.pop(t, "orders", "billing"), "a dry run moves nothing: the lease still holds")

	r = queenctl(t, b.env, "seek", "--group", "billing", "--queue", "orders", "--to-start")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Len(t, b.pop(t, "orders", "billing"), 2, "back to the start")

	r = queenctl(t, b.env, "seek", "--group", "billing", "--queue", "orders", "--to", "-1h", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var res admin.SeekResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.WithinDuration(t, time.Now().Add(-time.Hour), res.Target, time.Minute)
	r = queenctl(t, b.env, "seek", "--group", "billing", "--queue", "orders", "--to", "15m", "--dry-run", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"dryRun": true`)

	r = queenctl(t, b.env, "seek", "--group", "biling", "--queue", "orders", "--to-end")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "a typo?")
	_, err := b.adminClient().ConsumerGroup(context.Background(), "biling")
	assert.ErrorIs(t, err, admin.ErrNotFound, "the refusal created nothing")
	r = queenctl(t, b.env, "seek", "--group", "biling", "--queue", "orders", "--to-end", "--create")
	require.Equal(t, exitOK, r.code, r.stderr)
	_, err = b.adminClient().ConsumerGroup(context.Background(), "biling")
	assert.NoError(t, err)

	for _, bad := range [][]string{{"--to", "yesterday"}, {"--to", "-1h", "--to-start"}, {"--to-start", "--to-end"}} {
		args := append([]string{"seek", "--group", "billing", "--queue", "orders"}, bad...)
		assert.Equal(t, exitUsage, queenctl(t, b.env, args...).code, bad)
	}
}

func TestDeletesNeedYesAtATerminalAndDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1)
	page, err := b.adminClient().DeadLetters(context.Background(), adminDLQ("orders"))
	require.NoError(t, err)
	id := page.DeadLetters[0].ID

	for _, args := range [][]string{{"queue", "delete", "orders"}, {"group", "delete", "billing"}, {"dlq", "delete", id}} {
		r := atTerminal(t, b.env, args...)
		assert.Equal(t, exitFailure, r.code, args)
		assert.Contains(t, r.stderr, "needs --yes", args)

		r = atTerminal(t, b.env, append(args, "--dry-run")...)
		assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "dry run", args)
	}
	r := queenctl(t, b.env, "dlq", "replay", id, "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "would replay "+id)

	q, err := b.adminClient().QueueInfo(context.Background(), "orders")
	require.NoError(t, err)
	assert.Equal(t, int64(1), q.DeadLetters, "nothing was deleted or replayed")
	assert.Equal(t, int64(1), q.Messages)

	r = atTerminal(t, b.env, "dlq", "delete", id, "--yes")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = atTerminal(t, b.env, "group", "delete", "billing", "--yes")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "queue", "delete", "orders") // not a terminal: scripts need no --yes
	require.Equal(t, exitOK, r.code, r.stderr)
}

func TestHelpOnEveryOperatorCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"status"}, {"queue", "list"}, {"queue", "show"}, {"group", "list"}, {"group", "show"},
		{"lag"}, {"messages", "peek"}, {"tail"}, {"push"}, {"dlq", "show"}, {"ping"}, {"version"}} {
		r := queenctl(t, nil, append(args, "--help")...)
		assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "Usage: queenctl "+strings.Join(args, " "), args)
		assert.Contains(t, r.stdout, "-json", args)
	}
	for _, args := range [][]string{{"status", "x"}, {"group", "list", "x"}, {"group", "show"}, {"tail"}, {"tail", "q", "--limit", "0"},
		{"ping", "x"}, {"version", "x"}, {"lag", "--min", "x"}, {"messages"}, {"queue", "show", "a", "b"}} {
		r := queenctl(t, nil, args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}
