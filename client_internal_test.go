package queen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestPickServerSkipsUnhealthy(t *testing.T) {
	t.Parallel()
	c, err := New("http://a", WithServers("http://b", "http://c"))
	require.NoError(t, err)
	defer c.Close()
	key := affinityKey("q", "p", "g")
	first := c.pickServer(key, nil)
	assert.Same(t, first, c.pickServer(key, nil), "stable while health is unchanged")
	first.markDown()
	second := c.pickServer(key, nil)
	assert.NotSame(t, first, second)
	for _, s := range c.servers {
		s.markDown()
	}
	assert.NotNil(t, c.pickServer(key, nil), "with every server down, one is still tried")
	assert.NotSame(t, second, c.pickServer(key, second), "except is avoided when another exists")
}

// A long poll that runs out its own deadline says nothing about the broker's health.
func TestPollDeadlineDoesNotMarkServerDown(t *testing.T) {
	t.Parallel()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hanging.Close()
	other := httptest.NewServer(hanging.Config.Handler)
	defer other.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := New(hanging.URL, WithServers(other.URL), WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	defer c.Close()
	c.pollMargin = 0

	b := c.Queue("q").Wait(true).Timeout(time.Millisecond)
	q := b.popParams(forPop)
	_, err = c.doPop(t.Context(), QueueBuilder{client: c}, "/api/v1/pop/queue/q", q)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	for _, s := range c.servers {
		assert.True(t, s.healthy(time.Now().UnixNano()), "a polled server stays healthy")
	}
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
