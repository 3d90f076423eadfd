package queen_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// An error that wraps another says "queen: " once, at its start, however deep the nesting: a
// lost answer and what its resend got, an item the Producer gave up on, a refused option, a
// refused connection, a refused renewal.
func TestAnErrorSaysQueenOnce(t *testing.T) {
	t.Parallel()
	refused := testutil.RefusedURL

	errs := map[string]error{}
	srv := queentest.NewServer(t)
	c := stubClient(t, srv.URL(), queen.WithRetry(1, time.Millisecond, time.Millisecond),
		queen.WithLogger(slog.New(slog.DiscardHandler)))

	srv.Fail(queentest.Fault{Route: "push", After: true})
	srv.Fail(queentest.Fault{Route: "push", Status: 503})
	_, errs["a lost answer, then a 503"] = c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})

	_, errs["a refused option"] = c.Queue("q").Push(t.Context(), queen.PushItem{Data: json.RawMessage(`{`)})
	_, errs["a refused renewal"] = c.Renew(t.Context(), "00000000-0000-0000-0000-000000000000", time.Minute)
	_, errs["a refused connection"] = stubClient(t, refused, queen.WithRetry(0, 0, 0)).Queue("q").Push(t.Context(), queen.PushItem{Data: 1})

	srv.Fail(queentest.Fault{Route: "push", After: true, Times: math.MaxInt32})
	var mu sync.Mutex
	p, err := c.NewProducer(queen.ProducerConfig{OnResult: func(_ string, _ queen.PushItem, _ queen.PushResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs["an item the Producer gave up on"] = err
	}})
	require.NoError(t, err)
	require.NoError(t, p.Send(t.Context(), "q", queen.PushItem{Data: 1}))
	ctx, cancel := context.WithTimeout(testutil.Context(t), 50*time.Millisecond)
	defer cancel()
	require.Error(t, p.Close(ctx))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, errs, 5)
	for what, err := range errs {
		require.Error(t, err, what)
		assert.True(t, strings.HasPrefix(err.Error(), "queen: "), "%s: %s", what, err)
		assert.Equal(t, 1, strings.Count(err.Error(), "queen: "), "%s: %s", what, err)
	}
}
