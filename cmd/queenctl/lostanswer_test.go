package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// loseNextAnswer makes the broker apply the next request and drop its connection: the answer
// is lost, the change made, and the client's resend finds it made.
func loseNextAnswer(b broker) { b.srv.Fail(queentest.Fault{After: true}) }

// A delete whose answer was lost was applied, and its resend finds nothing: queenctl says
// that the delete may have been applied and exits 4, never that the thing was not found. On
// both generations (0.15 answers the resend 200 "deleted nothing").
func TestLostDeleteAnswersMayHaveBeenApplied(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		b.push(t, "orders", 1)
		b.push(t, "invoices", 2)
		require.Len(t, b.pop(t, "invoices", "billing"), 1)

		loseNextAnswer(b)
		r := queenctl(t, b.env, "queue", "delete", "orders")
		assert.Equal(t, exitUnknown, r.code, r.stderr)
		assert.Contains(t, r.stderr, `queue delete "orders": may have been applied`)
		assert.NotContains(t, r.stderr, "not found")
		_, err := b.adminClient().QueueInfo(context.Background(), "orders")
		assert.ErrorIs(t, err, admin.ErrNotFound, "the delete was applied")

		loseNextAnswer(b)
		r = queenctl(t, b.env, "group", "delete", "billing")
		assert.Equal(t, exitUnknown, r.code, r.stderr)
		assert.Contains(t, r.stderr, `group delete "billing": may have been applied`)
		assert.NotContains(t, r.stderr, "not found")

		r = queenctl(t, b.env, "queue", "delete", "orders") // no answer lost: not found, as before
		assert.Equal(t, exitFailure, r.code)
		assert.Contains(t, r.stderr, "not found")
	})
}

// Dead letters deleted or replayed with a lost answer are reported item by item as possibly
// applied; the batch exits 4 when that is the worst of it, and 1 when an item failed.
func TestLostDeadLetterAnswersMayHaveBeenApplied(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)
	ids := deadLetterIDs(t, b, "orders")
	require.Len(t, ids, 3)

	loseNextAnswer(b)
	r := queenctl(t, b.env, "dlq", "delete", ids[0], ids[1])
	assert.Equal(t, exitUnknown, r.code, r.stderr)
	assert.Contains(t, r.stderr, "delete "+ids[0]+": may have been applied")
	assert.NotContains(t, r.stderr, "not found")
	assert.Contains(t, r.stdout, "delete: 1 of 2 succeeded, 1 may have been applied")
	assert.Equal(t, ids[2:], deadLetterIDs(t, b, "orders"), "both deletes were applied")

	b.fileDeadLetters(t, "orders", "billing", 4)
	ids = deadLetterIDs(t, b, "orders")
	require.Len(t, ids, 2)
	loseNextAnswer(b)
	r = queenctl(t, b.env, "dlq", "replay", "--json", ids[0], ids[1], "nope")
	assert.Equal(t, exitFailure, r.code, "an item that failed outweighs one that may have been applied: %s", r.stderr)
	var outcomes []itemOutcome
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &outcomes))
	require.Len(t, outcomes, 3)
	assert.True(t, outcomes[0].MayHaveBeenApplied)
	assert.Contains(t, outcomes[0].Error, "may have been applied")
	assert.NotContains(t, outcomes[0].Error, "not found")
	assert.Empty(t, outcomes[1].Error)
	assert.False(t, outcomes[2].MayHaveBeenApplied)
	assert.Contains(t, outcomes[2].Error, "not found")
	assert.Len(t, b.pop(t, "orders", "shipping"), 6, "4 originals and one copy of each replay, the lost one included")
}

// On 0.15 a replay is a push under the transaction id dlq:<id>: a resend after a lost answer
// stores no second copy.
func TestLostReplayAnswerOn015StoresOneCopy(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.fileDeadLetters(t, "orders", "billing", 1)
	ids := deadLetterIDs(t, b, "orders")
	b.srv.Fail(queentest.Fault{Route: "push", After: true})
	r := queenctl(t, b.env, "dlq", "replay", ids[0])
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stderr+r.stdout, "not found")
	assert.Len(t, b.pop(t, "orders", "shipping"), 2, "the original and one copy")
}

// The exit status of a change that may have been applied is documented where people look.
func TestMayHaveBeenAppliedIsDocumented(t *testing.T) {
	t.Parallel()
	r := queenctl(t, nil, "--help")
	assert.Contains(t, r.stdout, "4 a change whose answer was lost")
	for _, args := range [][]string{{"dlq", "delete"}, {"dlq", "replay"}, {"queue", "delete"}, {"group", "delete"}} {
		r := queenctl(t, nil, append(args, "--help")...)
		text := strings.Join(strings.Fields(r.stdout), " ")
		assert.Contains(t, text, "answer was lost may have been applied: it is reported so, with exit status 4", args)
	}
}
