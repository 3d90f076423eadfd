package queen_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

const secretToken = "s3cr3t-t0ken-value"

// brokerStub is an httptest server whose handler the test sets; it counts requests.
func brokerStub(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// stubClient is a Client with its own transport, fast retries and the given options.
func stubClient(t *testing.T, url string, opts ...queen.Option) *queen.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]queen.Option{
		queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}),
		queen.WithRetry(3, time.Millisecond, 2*time.Millisecond),
	}, opts...)
	c, err := queen.New(url, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func TestRetries503ThenSucceedsOnce_R134(t *testing.T) {
	t.Parallel()
	var first atomic.Bool
	srv, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			writeJSON(w, 503, `{"error":"unavailable"}`)
			return
		}
		writeJSON(w, 200, pop20)
	})
	c := stubClient(t, srv.URL)
	msgs, err := c.Queue("orders").Group("billing").Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, int32(2), n.Load())
}

func TestGivesUpAfterRetriesWithLast5xx(t *testing.T) {
	t.Parallel()
	srv, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, `{"error":"engine broke"}`)
	})
	c := stubClient(t, srv.URL)
	_, err := c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, "engine broke", apiErr.Message)
	assert.True(t, apiErr.Temporary())
	assert.Equal(t, int32(4), n.Load(), "first try and 3 retries")
}

func TestDoesNotRetry4xx_R132(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 404} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			srv, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, status, `{"error":"Authentication required"}`)
			})
			c := stubClient(t, srv.URL, queen.WithToken(secretToken))
			_, err := c.Queue("q").Pop(t.Context())
			var apiErr *queen.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.False(t, apiErr.Temporary())
			assert.Equal(t, int32(1), n.Load(), "a 4xx is answered at once")
			assert.NotContains(t, err.Error(), secretToken)
		})
	}
}

func TestConnectionResetDuringPopIsRetried(t *testing.T) {
	t.Parallel()
	var first atomic.Bool
	srv, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		writeJSON(w, 200, pop20)
	})
	c := stubClient(t, srv.URL)
	msgs, err := c.Queue("orders").Wait(true).Timeout(time.Second).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, int32(2), n.Load())
}

// A long poll outlives the http.Client's Timeout (O11): an ordinary request sent after the
// poll started is cut by the 100ms Timeout, and only then does the broker answer the poll.
func TestLongPollIgnoresHTTPClientTimeout_O11(t *testing.T) {
	t.Parallel()
	pollWaiting := make(chan struct{})
	release := make(chan struct{})
	srv, _ := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/pop/"):
			close(pollWaiting)
			select {
			case <-release:
				writeJSON(w, 200, pop20)
			case <-r.Context().Done():
			}
		default: // the probe: held until its client gives up
			<-r.Context().Done()
			close(release)
		}
	})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := queen.New(srv.URL, queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 100 * time.Millisecond}),
		queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	type popped struct {
		msgs []*queen.Message
		err  error
	}
	done := make(chan popped, 1)
	go func() {
		msgs, err := c.Queue("orders").Wait(true).Timeout(30 * time.Second).Pop(context.Background())
		done <- popped{msgs, err}
	}()
	testutil.Recv(t, pollWaiting, "the pop to wait at the broker")
	probeErr := c.Do(t.Context(), http.MethodGet, "/probe", nil, nil, nil)
	require.Error(t, probeErr, "the ordinary request is bounded by the 100ms Timeout")

	got := testutil.Recv(t, done, "the pop")
	require.NoError(t, got.err)
	require.Len(t, got.msgs, 1)
}

func TestCancelledContextAbortsWaitingPop(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{})
	srv, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done()
	})
	c := stubClient(t, srv.URL)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Queue("q").Wait(true).Timeout(60 * time.Second).Pop(ctx)
		errc <- err
	}()
	testutil.Recv(t, waiting, "the pop to wait at the broker")
	cancel()
	err := testutil.Recv(t, errc, "the cancelled pop")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), n.Load(), "a cancelled pop is not retried")
}

// Backoff waits honour the context: a broker asking for a long wait does not hold a cancelled call.
func TestBackoffWaitHonoursContext(t *testing.T) {
	t.Parallel()
	answered := make(chan struct{}, 1)
	srv, _ := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, 429, `{"error":"slow down"}`)
		answered <- struct{}{}
	})
	c := stubClient(t, srv.URL, queen.WithRetry(5, time.Hour, time.Hour))
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

func TestDeadServerFailsOverToNext(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var auth atomic.Value
	live, n := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		writeJSON(w, 200, pop20)
	})
	var logs testutil.LogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := stubClient(t, deadURL, queen.WithServers(live.URL), queen.WithToken(secretToken), queen.WithLogger(logger))

	// Without an affinity key the first server is tried first; it is dead.
	require.NoError(t, c.Do(t.Context(), http.MethodGet, "/api/v1/anything", nil, nil, nil))
	assert.Equal(t, int32(1), n.Load())
	assert.Equal(t, "Bearer "+secretToken, auth.Load())

	// Every pop now reaches the live server, whatever its key.
	for _, q := range []string{"a", "b", "c", "d"} {
		msgs, err := c.Queue(q).Group("g").Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
	}
	assert.Equal(t, int32(5), n.Load())
	assert.Contains(t, logs.String(), "failing over")
	assert.NotContains(t, logs.String(), secretToken)
}

// The same (queue, partition, group) goes to the same healthy server.
func TestAffinityKeepsAKeyOnOneServer(t *testing.T) {
	t.Parallel()
	var hits [3]atomic.Int32
	urls := make([]string, 3)
	for i := range hits {
		srv, _ := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			w.WriteHeader(http.StatusNoContent)
		})
		urls[i] = srv.URL
	}
	c := stubClient(t, urls[0], queen.WithServers(urls[1:]...))
	for range 12 {
		_, err := c.Queue("orders").Partition("p7").Group("billing").Pop(t.Context())
		require.NoError(t, err)
	}
	used := 0
	for i := range hits {
		switch hits[i].Load() {
		case 0:
		case 12:
			used++
		default:
			t.Fatalf("server %d got %d of the 12 pops of one key", i, hits[i].Load())
		}
	}
	assert.Equal(t, 1, used)
}

func TestTokenNeverInErrorText(t *testing.T) {
	t.Parallel()
	srv, _ := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		// A broker that echoes the header back in its error.
		writeJSON(w, 400, `{"error":"bad header `+r.Header.Get("Authorization")+`"}`)
	})
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	c := stubClient(t, srv.URL, queen.WithToken(secretToken))
	_, err := c.Queue("q").Pop(t.Context())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secretToken)
	assert.Contains(t, err.Error(), "bad header Bearer")

	c2 := stubClient(t, dead.URL, queen.WithToken(secretToken))
	for _, call := range []func() error{
		func() error { _, err := c2.Queue("q").Pop(t.Context()); return err },
		func() error { _, err := c2.Queue("q").Push(t.Context(), queen.PushItem{}); return err },
		func() error { _, err := c2.Renew(t.Context(), "l", time.Second); return err },
	} {
		err := call()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), secretToken)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url   string
		opts  []queen.Option
		field string
	}{
		{"localhost:6632", nil, "server URL"},
		{"ftp://x", nil, "server URL"},
		{"http://", nil, "server URL"},
		{"http://x?y=1", nil, "server URL"},
		{"http://ok", []queen.Option{queen.WithServers("nope")}, "server URL"},
		{"http://ok", []queen.Option{queen.WithRetry(-1, time.Second, time.Second)}, "retry.max"},
		{"http://ok", []queen.Option{queen.WithRetry(1, 0, time.Second)}, "retry.minWait"},
		{"http://ok", []queen.Option{queen.WithRetry(1, time.Second, time.Millisecond)}, "retry.maxWait"},
		{"http://ok", []queen.Option{queen.WithHTTPClient(nil)}, "httpClient"},
		{"http://ok", []queen.Option{queen.WithLogger(nil)}, "logger"},
		{"http://ok", []queen.Option{queen.WithToken("a\nb")}, "token"},
	}
	for _, tc := range cases {
		c, err := queen.New(tc.url, tc.opts...)
		require.ErrorIs(t, err, queen.ErrInvalidOption, tc.url)
		assert.Contains(t, err.Error(), tc.field)
		assert.Nil(t, c)
	}
	c, err := queen.New("https://broker.example:6632/prefix/", queen.WithRetry(0, 0, 0))
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func TestCallsAfterCloseReturnErrClosed(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	_, err := c.Queue("q").Pop(t.Context())
	require.ErrorIs(t, err, queen.ErrClosed)
	_, err = c.Queue("q").Push(t.Context(), queen.PushItem{})
	require.ErrorIs(t, err, queen.ErrClosed)
	require.ErrorIs(t, c.Do(t.Context(), "GET", "/health", nil, nil, nil), queen.ErrClosed)
	assert.Empty(t, rec.All())
	assert.False(t, errors.Is(err, context.Canceled))
}
