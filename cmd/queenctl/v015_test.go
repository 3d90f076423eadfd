package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
)

// A 0.15 broker reports no total lag: lag --min sums the per-partition lag that group show
// lists, so the bound is checked against a number, and exit 1 comes when it is over.
func TestLagMinOn015SumsThePartitionLag(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.push(t, "orders", 1, 2, 3)
	msgs, err := b.client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Batch(1).Pop(context.Background())
	require.NoError(t, err)
	require.NoError(t, msgs[0].Ack(context.Background()))

	r := queenctl(t, b.env, "lag")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "?", fields(outLines(r.stdout)[1])[2], "without a bound, what the broker says, as before")

	r = queenctl(t, b.env, "lag", "--min", "1")
	assert.Equal(t, exitFailure, r.code, r.stdout)
	assert.Equal(t, "2", fields(outLines(r.stdout)[1])[2])
	assert.Contains(t, r.stdout, "<- over")
	assert.Contains(t, r.stdout, "lag is summed over the partitions the group has read")

	r = queenctl(t, b.env, "lag", "--min", "2", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rows []groupRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, int64(2), rows[0].Lag)
	assert.True(t, rows[0].LagSummed)
	assert.False(t, rows[0].Over)

	r = queenctl(t, b.env, "group", "show", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "2", fields(outLines(r.stdout)[1])[3], "the lag group show lists")
}

// Where a 0.15 broker's group cannot be described, its lag is unknown: lag --min says so and
// counts it as over, exit 1.
func TestLagMinWithUnknownLagExitsOne(t *testing.T) {
	t.Parallel()
	_, env := fake(t, answers(map[route.Route]string{
		route.GroupList: `[{"name":"billing","queueName":"orders","totalLag":null,"maxTimeLag":0,"members":1,"partitionsWithLag":0,"state":"Stable"}]`,
		route.Health:    `{"status":"healthy","version":"1.0.0"}`,
	}, "")) // the group's description: an empty body, as for a group 0.15 does not know
	r := queenctl(t, env, "lag", "--min", "5")
	assert.Equal(t, exitFailure, r.code, r.stdout)
	assert.Contains(t, r.stderr, "consumer group billing on queue orders: lag unknown")
	assert.Contains(t, r.stdout, "<- over (lag unknown)")
	assert.NotContains(t, r.stdout, "no consumer groups")
}

// version and ping say that 0.15's "1.0.0" is the version every 0.15 broker reports, not its
// release; a 2.0 broker's version is printed as it is.
func TestVersionAndPingExplainTheFixedVersion(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		b := newBrokerIn(t, m, "")
		const note = "1.0.0: the version every Queen 0.15 broker reports, whatever its release"
		for _, args := range [][]string{{"version"}, {"ping"}} {
			r := queenctl(t, b.env, args...)
			require.Equal(t, exitOK, r.code, r.stderr)
			if m.V015 {
				assert.Contains(t, r.stdout, note, args)
			} else {
				assert.NotContains(t, r.stdout, "0.15", args)
			}
		}
		r := queenctl(t, b.env, "version", "--json")
		require.Equal(t, exitOK, r.code, r.stderr)
		var v struct{ BrokerVersion, BrokerVersionNote string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
		assert.Equal(t, m.V015, v.BrokerVersionNote != "")
	})
	_, env := fake(t, func(route.Route, *http.Request) (int, string) {
		return http.StatusOK, `{"status":"healthy","version":"1.0.0","server":"someone"}`
	})
	r := queenctl(t, env, "ping", "-o", "yaml")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `versionNote: "the version every Queen 0.15 broker reports, whatever its release"`)
}

func outLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }
