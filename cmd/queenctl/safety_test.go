package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A delete typed at a terminal needs --yes, scripts need none; a dry run changes nothing.
func TestDeletesNeedYesAtATerminalAndDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1)
	id := b.newestDeadLetter(t, "orders")

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
