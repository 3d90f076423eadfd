package queen

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A broker failing every request sees the pops that were in flight when it failed, then one
// probe per backoff period, growing, however many pollers the loop runs (fake time).
func TestConsumeProbesAFailingBrokerOncePerBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var sent []time.Duration
		failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Since(start))
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: r,
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   io.NopCloser(strings.NewReader(`{"error":"down"}`))}, nil
		})
		c, err := New("http://broker.test", WithHTTPClient(&http.Client{Transport: failing}),
			WithRetry(0, time.Millisecond, time.Millisecond))
		require.NoError(t, err)
		defer c.Close()

		var reported errorLog
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		err = c.Queue("q").Concurrency(8).OnError(reported.record).Each().
			Consume(ctx, func(context.Context, *Message) error { return nil })
		require.NoError(t, err, "transient errors never end Consume")

		mu.Lock()
		defer mu.Unlock()
		// Pops sent before the first failure was known go out at once (at most one per poller);
		// after that, only probes.
		first := 0
		for first < len(sent) && sent[first] == 0 {
			first++
		}
		assert.GreaterOrEqual(t, first, 1)
		assert.LessOrEqual(t, first, 8)
		probes := sent[first:]
		// Shortest jittered waits 125ms, 250ms, 500ms, 1s, 2s, 4s; longest 375ms ... 6s.
		assert.GreaterOrEqual(t, len(probes), 4)
		assert.LessOrEqual(t, len(probes), 6)
		prev, wait := time.Duration(0), 250*time.Millisecond
		for _, at := range probes {
			assert.GreaterOrEqual(t, at-prev, wait/2, "probe at %v came too soon", at)
			prev, wait = at, 2*wait
		}
		_, errs := reported.all()
		assert.Len(t, errs, len(sent), "every failed pop went to OnError")
	})
}
