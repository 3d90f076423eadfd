package queen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
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

// An error answer of any bytes and status never panics the client. It becomes an *APIError with
// that status and a message that never holds the token, and is not empty where the status has a
// name; a body that is not a JSON error object is kept short.
func FuzzAPIError(f *testing.F) {
	for _, body := range []string{`{"error":"Authentication required"}`, `{"error":""}`, ``, `Not Found`,
		`<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`,
		`{"error":"[json.exception.type_error.302] type must be string, but is number"}`,
		`{"error":"bad header Bearer tok-123"}`, strings.Repeat("x", 500)} {
		f.Add([]byte(body), 500)
	}
	c := &Client{token: "tok-123"}
	r := answerRequest(route.Ack)
	f.Fuzz(func(t *testing.T, raw []byte, status int) {
		e := c.apiError(r, status, raw)
		assert.Equal(t, status, e.StatusCode)
		if http.StatusText(status) != "" {
			assert.NotEmpty(t, e.Message)
		}
		assert.NotContains(t, e.Message, c.token)
		if e.NotJSON {
			assert.LessOrEqual(t, utf8.RuneCountInString(e.Message), 201)
		}
	})
}

// An attempt that the standard transport never asked a connection for (its ctx was done when
// it started) was not sent; with a transport that reports nothing, only a failure to connect
// proves that.
func TestAnAttemptNeverSentIsKnownByTheStandardTransport(t *testing.T) {
	t.Parallel()
	standard, err := New("http://127.0.0.1:1", WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = standard.Close() })
	other, err := New("http://127.0.0.1:1", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, context.Canceled
	})}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	assert.True(t, standard.transportReports())
	assert.False(t, other.transportReports())

	assert.False(t, (&sendProgress{reports: true}).mayHaveApplied(context.Canceled), "reports, never asked for a connection")
	assert.True(t, (&sendProgress{}).mayHaveApplied(context.Canceled), "reports nothing: it may have been sent")
	sent := &sendProgress{reports: true}
	sent.traced.Store(true)
	sent.written.Store(true)
	assert.True(t, sent.mayHaveApplied(context.Canceled), "written")
}

// The http.Client's Timeout bounds each try, reading the answer's body included: a try that
// gets no answer in time is retried; an answer whose body stops coming fails the call.
func TestTheHTTPClientsTimeoutBoundsEachTry(t *testing.T) {
	t.Parallel()
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch tries.Add(1) {
		case 1: // no answer
			<-r.Context().Done()
		case 2:
			_, _ = w.Write([]byte(`{"a":1}`))
		default: // the start of a body, then nothing more
			_, _ = w.Write([]byte(`{"a":`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := New(srv.URL, WithHTTPClient(&http.Client{Transport: tr, Timeout: 100 * time.Millisecond}),
		WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	var out struct{ A int }
	require.NoError(t, c.Do(t.Context(), http.MethodGet, "/x", nil, nil, &out), "the second try is answered")
	assert.Equal(t, 1, out.A)
	assert.Equal(t, int32(2), tries.Load())
	err = c.Do(t.Context(), http.MethodGet, "/x", nil, nil, &out)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the body's reading is bounded too")
}
