package queen_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

// A 503 is retried, and the retry's answer is the call's: the broker applied nothing before its
// own 5xx.
func TestA503IsRetried(t *testing.T) {
	t.Parallel()
	var first atomic.Bool
	stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			writeJSON(w, 503, `{"error":"unavailable"}`)
			return
		}
		writeJSON(w, 200, pop20)
	})
	c := stubClient(t, url)
	msgs, err := c.Queue("orders").Group("billing").Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Len(t, stub.All(), 2)
}

// After the last retry the last 5xx is the call's *APIError.
func TestTheLast5xxIsTheErrorOnceRetriesAreSpent(t *testing.T) {
	t.Parallel()
	stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, `{"error":"engine broke"}`)
	})
	c := stubClient(t, url)
	_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, "engine broke", apiErr.Message)
	assert.True(t, apiErr.Temporary())
	assert.Len(t, stub.All(), 4, "first try and 3 retries")
}

// A 4xx other than 408 and 429 is answered at once, never retried, its error without the token.
func TestA4xxIsNotRetried(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, status, `{"error":"Authentication required"}`)
			})
			c := stubClient(t, url, queen.WithToken(secretToken))
			_, err := c.Queue("q").Pop(t.Context())
			var apiErr *queen.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.False(t, apiErr.Temporary())
			assert.Len(t, stub.All(), 1, "a 4xx is answered at once")
			assert.NotContains(t, err.Error(), secretToken)
		})
	}
}

// A connection reset during a pop is retried.
func TestAConnectionResetIsRetried(t *testing.T) {
	t.Parallel()
	var first atomic.Bool
	stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		writeJSON(w, 200, pop20)
	})
	c := stubClient(t, url)
	msgs, err := c.Queue("orders").Wait(true).Timeout(time.Second).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Len(t, stub.All(), 2)
}

// Backoff waits honour the context: a broker asking for a long wait does not hold a cancelled call.
func TestABackoffWaitEndsWithItsCtx(t *testing.T) {
	t.Parallel()
	answered := make(chan struct{}, 1)
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, 429, `{"error":"slow down"}`)
		answered <- struct{}{}
	})
	c := stubClient(t, url, queen.WithRetry(5, time.Hour, time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Queue("q").Push(ctx, queen.PushItem{Data: 1})
		errc <- err
	}()
	testutil.Recv(t, answered, "the 429")
	cancel()
	require.ErrorIs(t, testutil.Recv(t, errc, "the cancelled push"), context.Canceled)
}

// A server that cannot be reached is skipped: the retry goes to the next one, with the token,
// and the failover is logged without it.
func TestARetryFailsOverFromADeadServer(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var auth atomic.Value
	stub, liveURL := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		writeJSON(w, 200, pop20)
	})
	var logs testutil.LogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := stubClient(t, deadURL, queen.WithServers(liveURL), queen.WithToken(secretToken), queen.WithLogger(logger))

	// Without an affinity key the first server is tried first; it is dead.
	require.NoError(t, c.Do(t.Context(), http.MethodGet, "/api/v1/anything", nil, nil, nil))
	assert.Len(t, stub.All(), 1)
	assert.Equal(t, "Bearer "+secretToken, auth.Load())

	// Every pop now reaches the live server, whatever its key.
	for _, q := range []string{"a", "b", "c", "d"} {
		msgs, err := c.Queue(q).Group("g").Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
	}
	assert.Len(t, stub.All(), 5)
	assert.Contains(t, logs.String(), "failing over")
	assert.NotContains(t, logs.String(), secretToken)
}
