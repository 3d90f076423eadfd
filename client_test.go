package queen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Close signals every consume loop and returns only once each has finished.
func TestCloseWaitsForLoops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, err := New("http://broker.test")
		require.NoError(t, err)
		done, finish, err := c.startLoop()
		require.NoError(t, err)

		closed := make(chan struct{})
		go func() {
			_ = c.Close()
			close(closed)
		}()
		<-done
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while a loop was still running")
		default:
		}
		finish()
		finish() // a second finish is harmless
		<-closed

		_, _, err = c.startLoop()
		assert.ErrorIs(t, err, ErrClosed)
	})
}

// A loop stopped by Close still sends its last acks; calls after Close are refused.
func TestStoppingLoopCanStillSend(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := New(srv.URL, WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	done, finish, err := c.startLoop()
	require.NoError(t, err)
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	testutil.Recv(t, done, "the loop to be told to stop")
	require.NoError(t, c.Do(t.Context(), http.MethodPost, "/api/v1/ack/batch", nil, nil, nil))
	finish()
	testutil.Recv(t, closed, "Close to return")
	require.ErrorIs(t, c.Do(t.Context(), http.MethodPost, "/api/v1/ack/batch", nil, nil, nil), ErrClosed)
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

// Close is bounded when the broker answers no ack, whether it refuses the connections or
// takes the requests and never answers: it returns within ShutdownTimeout plus 10s (here the
// default 30s), a handler still running at Close included, and logs each ack it gave up at
// error level. (It took the whole lease before, the 60s of a push-created queue.)
func TestCloseIsBoundedWhenTheBrokerAnswersNoAck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		hang    bool
		handler time.Duration // how long the handler still runs after Close
	}{
		{"refused", false, 0},
		{"never answered", true, 0},
		{"never answered, handler running", true, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("dead", false)
				f.pushN("p", 1)
				var tr http.RoundTripper = f
				if tc.hang {
					f.ackHangs = true
				} else {
					tr = roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if rt, _ := route.Match(r.Method, r.URL.Path); rt.Family == route.FamilyAck {
							return nil, errors.New("connection refused")
						}
						return f.RoundTrip(r)
					})
				}
				var logs testutil.LogBuffer
				c, err := New("http://fake.test", WithHTTPClient(&http.Client{Transport: tr}), WithLogger(jsonLogger(&logs)))
				require.NoError(t, err)
				handling := make(chan struct{})
				done := testutil.Go(func() error {
					return c.Queue("dead").Each().Consume(context.Background(), func(context.Context, *Message) error {
						close(handling)
						time.Sleep(tc.handler)
						return nil
					})
				})
				<-handling
				if tc.handler == 0 {
					synctest.Wait() // the handler returned; its ack gets no answer
				}
				began := time.Now()
				require.NoError(t, c.Close())
				took := time.Since(began)
				require.NoError(t, <-done)
				assert.LessOrEqual(t, took, defaultShutdownTimeout+10*time.Second)
				assert.Equal(t, 1, strings.Count(logs.String(), `"level":"ERROR","msg":"queen: consume ack given up`), logs.String())
				assert.Contains(t, logs.String(), `"transactionId":"p-0"`)
			})
		})
	}
}
