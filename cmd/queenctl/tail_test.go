package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// printedValues decodes tail's NDJSON lines into the "n" of each payload, in order.
func printedValues(t *testing.T, lines []string) []int {
	t.Helper()
	out := make([]int, 0, len(lines))
	for _, line := range lines {
		var l messageLine
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		var v struct{ N int }
		require.NoError(t, json.Unmarshal(l.Data, &v), line)
		out = append(out, v.N)
	}
	return out
}

// tail -f prints each message once, in order: the newest --limit of what is stored (oldest of
// them first), then what arrives, and none of the older ones, even when all of them share one
// creation time (the manual clock never moves), on both generations.
func TestTailFollowPrintsEachMessageOnceInOrder(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		for n := range 15 {
			b.push(t, "orders", n)
		}
		out, _, cancel, done := streams(t, b.env, "tail", "orders", "-f", "--limit", "2", "--json", "--interval", "2ms")
		first := []string{testutil.Recv(t, out.seen, "the first message"), testutil.Recv(t, out.seen, "the second message")}
		assert.Equal(t, []int{13, 14}, printedValues(t, first))

		b.push(t, "orders", 15, 16, 17)
		b.push(t, "orders", 18)
		b.push(t, "orders", 19) // the last: everything printed before it is what tail printed at all
		rest := recvUntil(t, out, `{"n":19}`, "the messages pushed while following")
		cancel()
		assert.Equal(t, exitOK, testutil.Recv(t, done, "tail to stop"))
		assert.Equal(t, []int{15, 16, 17, 18, 19}, printedValues(t, rest), "once each, in order, nothing older")
	})
}

// tail -f on a queue that does not exist yet says so and waits for it, then prints what is
// pushed to it, on both generations.
func TestTailFollowWaitsForAQueueThatDoesNotExistYet(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		out, errs, cancel, done := streams(t, b.env, "tail", "later", "-f", "--json", "--interval", "2ms")
		recvUntil(t, errs, "queue later does not exist yet; waiting for it", "tail to say it waits")
		b.push(t, "later", 1, 2)
		got := []string{testutil.Recv(t, out.seen, "the first message"), testutil.Recv(t, out.seen, "the second message")}
		b.push(t, "later", 3)
		got = append(got, testutil.Recv(t, out.seen, "the third message"))
		cancel()
		assert.Equal(t, exitOK, testutil.Recv(t, done, "tail to stop"))
		assert.Equal(t, []int{1, 2, 3}, printedValues(t, got))
	})
	// Without -f there is nothing to wait for: an unknown queue is an error, as before.
	b := newBroker(t, "")
	r := queenctl(t, b.env, "tail", "nope")
	assert.Equal(t, exitFailure, r.code, r.stderr)
}

// tail --group says that it creates the group, which stays, and how to delete it; it says
// nothing of the kind for a group that already reads the queue.
func TestTailAsGroupSaysItCreatesTheGroupAndHowToDeleteIt(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		b.push(t, "orders", 1)
		r := queenctl(t, b.env, "tail", "orders", "--group", "audit")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, "this creates consumer group audit on queue orders")
		assert.Contains(t, r.stderr, "stays after tail ends; delete it with: queenctl group delete audit --queue orders")

		require.Len(t, b.pop(t, "orders", "billing"), 1)
		r = queenctl(t, b.env, "tail", "orders", "--group", "billing")
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, "as consumer group billing")
		assert.NotContains(t, r.stderr, "creates")

		r = queenctl(t, b.env, "group", "delete", "audit", "--queue", "orders")
		require.Equal(t, exitOK, r.code, "the command it gives works: %s", r.stderr)
		_, err := b.adminClient().ConsumerGroup(context.Background(), "audit")
		assert.ErrorIs(t, err, admin.ErrNotFound)
	})
}

// tail prints nothing older than it has shown when more than a look's worth arrives between
// two looks: it looks deeper, and says when even that was not deep enough.
func TestTailFollowLooksDeeperWhenManyArrive(t *testing.T) {
	t.Parallel()
	b := newBroker(t, "")
	b.push(t, "orders", 0)
	out, _, cancel, done := streams(t, b.env, "tail", "orders", "-f", "--json", "--interval", "2ms")
	assert.Equal(t, []int{0}, printedValues(t, []string{testutil.Recv(t, out.seen, "the stored message")}))
	values := make([]int, 0, 250)
	for n := 1; n <= 250; n++ {
		values = append(values, n)
	}
	b.push(t, "orders", values...)
	got := recvUntil(t, out, `{"n":250}`, "the burst")
	cancel()
	assert.Equal(t, exitOK, testutil.Recv(t, done, "tail to stop"))
	assert.Equal(t, values, printedValues(t, got))
}
