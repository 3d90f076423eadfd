package queen_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// The README's "Testing your own worker" snippet, kept compiling and passing: a worker run with
// queentest.Run handles every order, the test waits for the broker to be idle instead of
// sleeping, and stop reports a graceful stop.
func TestWorkerBillsEveryOrder(t *testing.T) {
	ctx := t.Context()
	srv := queentest.NewServer(t) // real HTTP on 127.0.0.1; QUEEN_COMPAT=0.15 makes it answer as 0.15
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })

	orders := client.Queue("orders")
	_, err = orders.Push(ctx, queen.PushItem{Data: map[string]int{"order": 1}},
		queen.PushItem{Data: map[string]int{"order": 2}})
	require.NoError(t, err)

	var billed atomic.Int32
	stop := queentest.Run(t, func(ctx context.Context) error { // the worker, until stop or the test's end
		return orders.Group("billing").SubscriptionMode(queen.SubscribeAll).Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
			billed.Add(1)
			return nil
		})
	})
	require.NoError(t, srv.WaitIdle(ctx, "orders", "billing")) // every order acked: no sleeping
	require.NoError(t, stop())                                 // the worker stopped gracefully
	require.Equal(t, int32(2), billed.Load())
}

// The snippet in the README is the test above, word for word, so that what users copy compiles
// and passes.
func TestTheReadmeShowsTheWorkerTestAsItRuns(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	section := regexp.MustCompile("(?s)### Testing your own worker\n\n```go\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, section, "the README has a Go block under Testing your own worker")
	source, err := os.ReadFile("readme_test.go")
	require.NoError(t, err)
	fn := regexp.MustCompile("(?s)\nfunc TestWorkerBillsEveryOrder.*?\n}\n").Find(source)
	require.NotNil(t, fn)
	require.Equal(t, strings.TrimSpace(string(fn)), strings.TrimSpace(string(section[1])))
}
