package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

// seek moves the group to a time (it rereads what was pushed from then) or to the end; an
// unknown queue is not found.
func TestSeekMovesTheGroupToATimeOrTheEnd(t *testing.T) {
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

// seek takes times relative to now, shows a dry run without moving anything, and refuses a
// group the broker does not know on the queue (a typo) unless --create.
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
