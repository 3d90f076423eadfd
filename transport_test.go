package queen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
