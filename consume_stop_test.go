package queen

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
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

// Shutdown(ctx) returns ctx's error while a handler ignores its cancelled ctx, and the loop
// logs the message it holds every 10s; Close still waits for the handler.
func TestShutdownReturnsAtCtxEndWithAStuckHandler(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	var logs testutil.LogBuffer
	c := newTestClient(t, srv.URL(), WithLogger(jsonLogger(&logs)))
	clock, _ := useManualRenewClock(c)
	clock.armed = make(chan time.Duration, 16)
	pushN(t, c, "stuck", "p", 1)

	started, release := make(chan struct{}), make(chan struct{})
	done := testutil.Go(func() error {
		return c.Queue("stuck").ShutdownTimeout(0).Each().Consume(context.Background(),
			func(context.Context, *Message) error {
				close(started)
				<-release // ignores its ctx
				return nil
			})
	})
	testutil.Recv(t, started, "the handler")
	ctx, cancel := context.WithCancel(context.Background())
	shut := testutil.Go(func() error { return c.Shutdown(ctx) })
	assert.Equal(t, stuckLogEvery, testutil.Recv(t, clock.armed, "the stuck watch"))
	for range 2 {
		clock.Advance(stuckLogEvery)
		testutil.Recv(t, clock.armed, "the next stuck watch") // made once the line was logged
	}
	lines := strings.Count(logs.String(), `"msg":"queen: consume handler still running after its ctx was cancelled"`)
	assert.Equal(t, 2, lines, logs.String())
	assert.Contains(t, logs.String(), `"level":"ERROR"`)
	assert.Contains(t, logs.String(), `"transactionId":"p-0"`)
	assert.Contains(t, logs.String(), `"queue":"stuck","partition":"p"`)

	cancel()
	assert.ErrorIs(t, testutil.Recv(t, shut, "Shutdown"), context.Canceled)
	close(release)
	require.NoError(t, testutil.Recv(t, done, "Consume"))
	require.NoError(t, c.Close(), "Close waits for the Close that Shutdown began")
	assert.ErrorIs(t, c.Queue("stuck").Each().Consume(t.Context(), func(context.Context, *Message) error { return nil }), ErrClosed)
}

// Shutdown returns nil once every loop has stopped.
func TestShutdownReturnsNilOnceLoopsStop(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t)
	pushN(t, c, "idle", "p", 1)
	handled := make(chan struct{})
	done := testutil.Go(func() error {
		return c.Queue("idle").Each().Consume(context.Background(), func(context.Context, *Message) error {
			close(handled)
			return nil
		})
	})
	testutil.Recv(t, handled, "the handler")
	require.NoError(t, c.Shutdown(testutil.Context(t)))
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// A lost lease reaches OnError as ErrLeaseLost with the batch's first message.
func TestConsumeLostLeaseIsReportedToOnError(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	c := newTestClient(t, srv.URL())
	clock, renewed := useManualRenewClock(c)
	pushN(t, c, "lost-report", "p", 1)
	started := make(chan struct{})
	reported := make(chan error, 4)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	done := testutil.Go(func() error {
		return c.Queue("lost-report").LeaseTime(10*time.Second).RenewLease(true, 0).
			OnError(func(m *Message, err error) {
				if errors.Is(err, ErrLeaseLost) && m != nil && m.TransactionID == "p-0" {
					reported <- err
				}
			}).Each().
			Consume(ctx, func(hctx context.Context, m *Message) error {
				if m.DeliveryAttempt == 1 {
					close(started)
					<-hctx.Done()
					return hctx.Err()
				}
				return nil
			})
	})
	testutil.Recv(t, started, "the handler")
	srv.Advance(11 * time.Second)
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
	assert.ErrorIs(t, testutil.Recv(t, reported, "the report"), ErrLeaseLost)
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// Ping reads the broker's health answer.
func TestPingReadsTheBrokersHealth(t *testing.T) {
	t.Parallel()
	_, c := brokerAndClient(t, queentest.WithToken("secret"))
	info, err := c.Ping(t.Context())
	require.NoError(t, err, "health needs no token")
	assert.Equal(t, "healthy", info.Status)
	assert.NotEmpty(t, info.Version)

	down := newTestClient(t, "http://127.0.0.1:1")
	_, err = down.Ping(t.Context())
	assert.Error(t, err)
}
