package queen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
