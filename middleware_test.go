package queen

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Middleware runs client's outside the loop's, each in the order given, around the handler,
// with the ctx each passes on; its return is the outcome.
func TestMiddlewareOrderAndOutcome(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var mu sync.Mutex
	var trace []string
	type key struct{}
	mw := func(name string) Middleware {
		return func(ctx context.Context, msgs []*Message, next func(context.Context) error) error {
			mu.Lock()
			trace = append(trace, name+">"+strings.Repeat("m", len(msgs)))
			mu.Unlock()
			err := next(context.WithValue(ctx, key{}, name))
			mu.Lock()
			trace = append(trace, "<"+name)
			mu.Unlock()
			return err
		}
	}
	// The innermost middleware completes what the handler failed.
	forgive := func(ctx context.Context, _ []*Message, next func(context.Context) error) error {
		_ = next(ctx)
		return nil
	}
	var rec hookLog
	c := newTestClient(t, srv.URL(), WithMiddleware(mw("client1"), mw("client2")), WithHooks(rec.hooks()))
	pushN(t, c, "mw", "p", 1)
	var seen any
	err := c.Queue("mw").Use(mw("loop1")).Use(mw("loop2"), forgive).Limit(1).Each().
		Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
			seen = ctx.Value(key{})
			mu.Lock()
			trace = append(trace, "handler")
			mu.Unlock()
			return errors.New("forgiven")
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"client1>m", "client2>m", "loop1>m", "loop2>m", "handler",
		"<loop2", "<loop1", "<client2", "<client1"}, trace)
	assert.Equal(t, "loop2", seen, "the handler gets the ctx the innermost middleware passed")
	assert.Equal(t, []string{`p-0 "completed" panicked=false`}, rec.handledLines())
	assert.Empty(t, drain(t, c, "mw"), "the message was completed")
}

// A BatchHandler's middleware sees the whole batch; a handler's panic reaches it as a
// *PanicError, and a middleware's own panic is recovered like a handler's.
func TestMiddlewareSeesBatchesAndPanics(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	var rec hookLog
	c.hooks.add(rec.hooks())
	pushN(t, c, "mwb", "p", 3)
	var sizes []int
	var seenPanic bool
	err := c.Queue("mwb").Batch(3).Limit(3).Use(func(ctx context.Context, msgs []*Message, next func(context.Context) error) error {
		sizes = append(sizes, len(msgs))
		err := next(ctx)
		var p *PanicError
		seenPanic = errors.As(err, &p)
		return DeadLetter(err)
	}).Consume(testutil.Context(t), func(context.Context, []*Message) error { panic("batch") })
	require.NoError(t, err)
	assert.Equal(t, []int{3}, sizes)
	assert.True(t, seenPanic)
	assert.Equal(t, []string{`p-0 "dlq" panicked=true`, `p-1 "dlq" panicked=true`, `p-2 "dlq" panicked=true`},
		rec.handledLines())
	assert.Len(t, deadLetters(t, c, "mwb"), 3)

	pushN(t, c, "mwp", "p", 1)
	err = c.Queue("mwp").Limit(1).Use(func(context.Context, []*Message, func(context.Context) error) error {
		panic("middleware")
	}).Each().Consume(testutil.Context(t), func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	last := rec.handled[len(rec.handled)-1]
	assert.Equal(t, StatusFailed, last.Outcome)
	assert.True(t, last.Panicked)
}

func TestNilMiddlewareIsRefused(t *testing.T) {
	t.Parallel()
	_, err := New("http://127.0.0.1:1", WithMiddleware(nil))
	assert.ErrorIs(t, err, ErrInvalidOption)
	c := newTestClient(t, "http://127.0.0.1:1")
	err = c.Queue("q").Use(nil).Each().Consume(t.Context(), func(context.Context, *Message) error { return nil })
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.ErrorContains(t, err, "Use")
}
