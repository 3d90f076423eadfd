package queen_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// The README's "Testing your own worker" snippet, kept compiling and passing: a message whose
// lease runs out unacked is delivered again, one attempt higher.
func TestTheReadmesWorkerTestPasses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := queentest.NewServer(t, queentest.WithManualClock()) // real HTTP on 127.0.0.1, closed by t.Cleanup
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })

	_, err = client.Queue("orders").Push(ctx, queen.PushItem{Data: map[string]int{"order": 1}})
	require.NoError(t, err)
	_, err = client.Queue("orders").Pop(ctx) // leased and never acked: the worker crashed
	require.NoError(t, err)

	srv.Advance(2 * time.Minute) // the lease expires: no sleeping
	again, err := client.Queue("orders").Pop(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, again[0].DeliveryAttempt)
}
