package queen

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Without WithLogger, a loop that cannot reach its broker says so at warn level on
// slog.Default(), and nothing below warn reaches it. Not parallel: it replaces slog.Default.
func TestDefaultLoggerWarnsOfAnUnreachableBroker(t *testing.T) {
	var logs testutil.LogBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	c, err := New("http://127.0.0.1:1", WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	err = c.Queue("q").OnError(func(*Message, error) { cancel() }).Each().
		Consume(ctx, func(context.Context, *Message) error { return nil })
	require.NoError(t, err)
	out := logs.String()
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "consume pop failed")
	assert.NotContains(t, out, "level=DEBUG")
	assert.NotContains(t, out, "level=INFO")
}
