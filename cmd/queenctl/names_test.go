package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
)

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// push prints the partition each message went to by name, one message or many, on both
// generations; its JSON has the name too.
func TestPushPrintsPartitionNames(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		r := queenctl(t, b.env, "push", "orders", "--partition", "eu-west", "--transaction-id", "t1", "--data", `{"n":1}`)
		require.Equal(t, exitOK, r.code, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, lines, 2)
		assert.Equal(t, []string{"TRANSACTION", "ID", "STATUS", "PARTITION", "OFFSET"}, fields(lines[0]))
		assert.Equal(t, []string{"t1", "queued", "eu-west"}, fields(lines[1])[:3])
		assert.False(t, uuidPattern.MatchString(r.stdout), "no partition id in %s", r.stdout)

		r = queenctl(t, b.env, "push", "orders", "--data", `1 2`)
		require.Equal(t, exitOK, r.code, r.stderr)
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
			assert.Equal(t, "Default", fields(line)[2], line)
		}

		r = queenctl(t, b.env, "push", "orders", "--partition", "eu-west", "--data", `3`, "--json")
		require.Equal(t, exitOK, r.code, r.stderr)
		var rows []pushRow
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
		require.Len(t, rows, 1)
		assert.Equal(t, "eu-west", rows[0].Partition)
	})
}

// dlq replay prints the partition each copy went to by name, by id and with --all, on both
// generations (on 0.15 the replay is a push).
func TestReplayPrintsPartitionNames(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		for _, p := range []string{"eu-west", "us-east"} {
			_, err := b.client.Queue("orders").Partition(p).Push(context.Background(), queen.PushItem{Data: map[string]string{"p": p}})
			require.NoError(t, err)
			msgs, err := b.client.Queue("orders").Partition(p).Group("billing").SubscriptionMode(queen.SubscribeAll).Pop(context.Background())
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			require.NoError(t, msgs[0].DeadLetter(context.Background(), assert.AnError))
		}
		ids := deadLetterIDs(t, b, "orders")
		require.Len(t, ids, 2)

		r := queenctl(t, b.env, "dlq", "replay", ids[0])
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Regexp(t, `\(partition (eu-west|us-east), offset `, r.stdout)
		assert.NotRegexp(t, `partition (id )?`+uuidPattern.String(), r.stdout)

		r = queenctl(t, b.env, "dlq", "replay", "--queue", "orders", "--all", "--json")
		require.Equal(t, exitOK, r.code, r.stderr)
		var outcomes []struct{ Result replayedRow }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &outcomes))
		var names []string
		for _, o := range outcomes {
			names = append(names, o.Result.Partition)
		}
		if m.V015 { // 0.15 keeps the dead letters listed: both are replayed (again)
			assert.ElementsMatch(t, []string{"eu-west", "us-east"}, names)
		} else {
			require.Len(t, names, 1)
			assert.Contains(t, []string{"eu-west", "us-east"}, names[0])
		}
	})
}
