package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// The example closes its client and its in-process broker: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// The failing order is retried, dead-lettered, replayed and then charged, the others are not
// held up, and the queue is deleted at the end, with the same output on both broker generations.
func TestQuickstart(t *testing.T) {
	got := exampletest.SameInBothModes(t, run,
		"pushed 5 orders",
		"order 3: card declined (delivery 1)",
		"order 3: card declined (delivery 2)",
		"dead letter: {\"id\":3,\"amount\":30} after 1 retries: card declined",
		"card fixed, dead letter replayed",
		"order 3: charged 30 (delivery 3)",
		"deleted quickstart-orders\n",
		"quickstart done",
	)
	require.Equal(t, 2, strings.Count(got, "order 3: card declined"), "delivered retryLimit+1 times")
	for _, id := range []string{"1", "2", "4", "5"} {
		require.Contains(t, got, "order "+id+": charged "+id+"0 (delivery 1)", "other customers are not held up")
	}
	require.Equal(t, 1, strings.Count(got, "order 3: charged"), "the replay is handled once")
}

// On a broker the example did not start, the queue has a name of its own at every run, and
// the run deletes it: nothing is left behind, run after run.
func TestQuickstartLeavesNoQueueBehindOnARunningBroker(t *testing.T) {
	srv := queentest.NewServer(t)
	t.Setenv("QUEEN_URL", srv.URL())
	t.Setenv("QUEEN_TOKEN", "")
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	ops := admin.New(client)
	for range 2 {
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), &out))
		require.Contains(t, out.String(), "quickstart done")
		queues, err := ops.Queues(t.Context())
		require.NoError(t, err)
		require.Empty(t, queues, "the run deleted its queue")
	}
}
