package queen_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
)

const mockBase = "http://broker.test"

// mockClient is a Client whose requests go to an httpmock transport of its own, so tests run
// in parallel. Retries wait a millisecond.
func mockClient(t *testing.T, opts ...queen.Option) (*queen.Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	all := append([]queen.Option{
		queen.WithHTTPClient(&http.Client{Transport: mt}),
		queen.WithRetry(2, time.Millisecond, 2*time.Millisecond),
	}, opts...)
	c, err := queen.New(mockBase, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, mt
}

// recorded is one request a responder saw.
type recorded struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

// recorder answers every request with status and body, and keeps what it saw.
type recorder struct {
	mu       sync.Mutex
	requests []recorded
}

func (r *recorder) respond(status int, body string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		r.keep(req)
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

func (r *recorder) keep(req *http.Request) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, recorded{Method: req.Method, Path: req.URL.EscapedPath(),
		RawQuery: req.URL.RawQuery, Header: req.Header.Clone(), Body: string(body)})
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.requests...)
}

func (r *recorder) only(t *testing.T) recorded {
	t.Helper()
	all := r.all()
	require.Len(t, all, 1, "requests sent")
	return all[0]
}

// popOne pops the message of a canned pop answer, for ack and renew tests.
func popOne(t *testing.T, c *queen.Client, mt *httpmock.MockTransport, body string, group string) *queen.Message {
	t.Helper()
	var rec recorder
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop/`), rec.respond(200, body))
	b := c.Queue("q")
	if group != "" {
		b = b.Group(group)
	}
	msgs, err := b.Pop(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs[0]
}

func jsonEq(t *testing.T, want, got string) {
	t.Helper()
	require.True(t, json.Valid([]byte(got)), "not JSON: %s", got)
	require.JSONEq(t, want, got)
}

var mustRegexp = regexp.MustCompile
