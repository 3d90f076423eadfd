package queen

import (
	"context"
	"errors"
	"fmt"
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
// probe per backoff period, growing, whatever the Concurrency (fake time).
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
		// Pops sent before the first failure was known go out at once (one, from the fetch loop);
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

// Which pop errors end Consume (O10, O26) and which are waited out.
func TestConsumeFatalErrors(t *testing.T) {
	t.Parallel()
	api := func(status int, notJSON bool) error {
		return &APIError{StatusCode: status, Method: http.MethodGet, Path: "/api/v1/pop", NotJSON: notJSON}
	}
	fatal := map[string]error{
		"401":            api(401, false),
		"403":            api(403, false),
		"404 not JSON":   api(404, true),
		"404 JSON":       api(404, false),
		"400":            api(400, false),
		"invalid option": invalidOption("batch", 0, "must be 1..10000"),
	}
	for name, err := range fatal {
		assert.True(t, isFatal(err), name)
		assert.True(t, isFatal(fmt.Errorf("wrapped: %w", err)), name)
	}
	transient := map[string]error{
		"408":               api(408, false),
		"429":               api(429, false),
		"500":               api(500, false),
		"503":               api(503, false),
		"0.15 200 failure":  api(200, false),
		"connection reset":  errors.New("read tcp: connection reset by peer"),
		"deadline exceeded": context.DeadlineExceeded,
	}
	for name, err := range transient {
		assert.False(t, isFatal(err), name)
	}
}
