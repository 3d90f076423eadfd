package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// newBroker015 is newBroker with the reference broker answering as a 0.15 broker does.
func newBroker015(t *testing.T) broker {
	t.Helper()
	srv := queentest.NewServer(t, queentest.WithManualClock(), queentest.WithCompat("0.15"))
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return broker{srv: srv, client: client, env: map[string]string{"QUEEN_URL": srv.URL()}}
}

// O29: 0.15 answers the deletion of an unknown queue or group with a 200 that deleted nothing;
// queenctl says not found and exits 1, as on 2.0.
func TestCompat015DeleteUnknownIsNotFound_O29(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.push(t, "orders", 1)
	require.Len(t, b.pop(t, "orders", "billing"), 1)

	r := queenctl(t, b.env, "group", "delete", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "group", "delete", "billing")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "not found")

	r = queenctl(t, b.env, "queue", "delete", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "queue", "delete", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `queue delete "orders"`)
	assert.Contains(t, r.stderr, "not found")
}

// O21: 0.15 ignores deadLetterQueue:false; queenctl does not claim the dead-letter queue is off.
func TestCompat015ConfigureDoesNotClaimNoDLQ_O21(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	r := queenctl(t, b.env, "queue", "configure", "orders", "--no-dlq")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "off")
	assert.Contains(t, r.stdout, "on (the broker ignores the setting)")
	assert.Contains(t, r.stdout, "dead-letter queue not changed: the broker ignores the setting")
}

// O24, O25: 0.15 cannot page its dead-letter list, and a repeated emulated replay stores nothing.
func TestCompat015DeadLetterListAndReplay_O24_O25(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)

	r := queenctl(t, b.env, "dlq", "list", "--queue", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "3 dead letters (the broker does not report a total)")
	r = queenctl(t, b.env, "dlq", "list", "--queue", "orders", "--offset", "1")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "the broker cannot page")
	assert.NotContains(t, r.stdout, "0 of 3")

	ids := deadLetterIDs(t, b, "orders")
	require.Len(t, ids, 3)
	r = queenctl(t, b.env, "dlq", "replay", ids[0])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "by a push: the broker has no replay route")
	r = queenctl(t, b.env, "dlq", "replay", ids[0])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "nothing stored")
	copies := b.pop(t, "orders", "shipping")
	assert.Len(t, copies, 4, "3 originals and one copy: the repeat stored nothing")
}
