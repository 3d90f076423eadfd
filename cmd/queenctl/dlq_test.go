package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

// dlq list prints a page of dead letters as a table or, with --json, as the page itself.
func TestDLQListPrintsAPageOfDeadLetters(t *testing.T) {
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

// dlq replay pushes each dead letter's copy for every group and reports each outcome; an id
// that fails is reported and makes the exit status 1, the others still replay.
func TestDLQReplayByIDReportsEachOutcome(t *testing.T) {
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

// dlq replay --all replays every dead letter of the queue (and group) given, and says when
// there is none.
func TestDLQReplayAllReplaysEveryMatchingDeadLetter(t *testing.T) {
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

// dlq delete removes the dead letters named; an unknown id is reported and exits 1.
func TestDLQDeleteRemovesByID(t *testing.T) {
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
