package queen_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Request hooks name route patterns, never concrete paths; Acked sees every answered ack item;
// client middleware wraps the loop's.
func TestAcceptanceHooksAndMiddleware(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		var mu sync.Mutex
		var routes []string
		var acked []queen.AckedEvent
		var trail []string
		mw := func(name string) queen.Middleware {
			return func(ctx context.Context, msgs []*queen.Message, next func(context.Context) error) error {
				mu.Lock()
				trail = append(trail, name+">")
				mu.Unlock()
				err := next(ctx)
				mu.Lock()
				trail = append(trail, "<"+name)
				mu.Unlock()
				return err
			}
		}
		_, _, c := tappedWith(t, m, []queen.Option{
			queen.WithHooks(queen.Hooks{Request: func(e queen.RequestEvent) {
				mu.Lock()
				routes = append(routes, e.Route)
				mu.Unlock()
			}}),
			queen.WithHooks(queen.Hooks{Acked: func(e queen.AckedEvent) {
				mu.Lock()
				acked = append(acked, e)
				mu.Unlock()
			}}),
			queen.WithMiddleware(mw("client")),
		}, queentest.WithManualClock())
		push(t, c, "secret-queue", "secret-part", 0)
		err := c.Queue("secret-queue").Use(mw("loop")).Limit(1).Each().
			Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
				mu.Lock()
				trail = append(trail, "handler")
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, routes)
		for _, r := range routes {
			assert.NotContains(t, r, "secret", "a route is a pattern")
			assert.True(t, strings.HasPrefix(r, "/"), r)
		}
		assert.Contains(t, routes, "/api/v1/pop/queue/{queue}")
		require.Len(t, acked, 1)
		assert.Equal(t, queen.StatusCompleted, acked[0].Status)
		assert.True(t, acked[0].Success)
		assert.Equal(t, []string{"client>", "loop>", "handler", "<loop", "<client"}, trail)
	})
}
