package queen_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Shutdown returns at its ctx's end while a handler ignores its ctx; Consume still waits for it
// and its ack is still sent.
func TestShutdownReturnsAtItsCtxEndWhileAHandlerIsStuck(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", 0)
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.Queue("q").ShutdownTimeout(time.Millisecond).Each().
				Consume(testutil.Context(t), func(context.Context, *queen.Message) error {
					close(started)
					<-release
					return nil
				})
		}()
		testutil.Recv(t, started, "the handler")
		sctx, cancel := context.WithTimeout(testutil.Context(t), 30*time.Millisecond)
		defer cancel()
		err := c.Shutdown(sctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		select {
		case err := <-done:
			t.Fatalf("Consume returned (%v) while its handler runs", err)
		default:
		}
		close(release)
		require.NoError(t, testutil.Recv(t, done, "Consume to return"))
		assert.NotEmpty(t, statuses(tap), "the stuck handler's ack is still sent")
		assert.NoError(t, c.Shutdown(testutil.Context(t)), "a second Shutdown with nothing running")
	})
}

// After Close every call that talks to the broker returns ErrClosed and sends nothing; Close is
// idempotent.
func TestEveryCallAfterCloseIsErrClosed(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop20, "billing")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[]`))
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")

	_, err := c.Queue("q").Pop(t.Context())
	assert.ErrorIs(t, err, queen.ErrClosed, "Pop")
	_, err = c.Queue("q").Push(t.Context(), queen.PushItem{Data: 1})
	assert.ErrorIs(t, err, queen.ErrClosed, "Push")
	assert.ErrorIs(t, c.Do(t.Context(), "GET", "/health", nil, nil, nil), queen.ErrClosed, "Do")
	_, err = c.Ack(t.Context(), m, queen.StatusCompleted)
	assert.ErrorIs(t, err, queen.ErrClosed, "Ack")
	_, err = c.AckBatch(t.Context(), []queen.AckItem{{Message: m}})
	assert.ErrorIs(t, err, queen.ErrClosed, "AckBatch")
	assert.ErrorIs(t, m.Ack(t.Context()), queen.ErrClosed, "m.Ack")
	_, err = c.Renew(t.Context(), "lid-1", time.Minute)
	assert.ErrorIs(t, err, queen.ErrClosed, "Renew")
	_, err = c.Transaction().Push("q", queen.PushItem{Data: 1}).Commit(t.Context())
	assert.ErrorIs(t, err, queen.ErrClosed, "Commit")
	err = c.Queue("q").Each().Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
	assert.ErrorIs(t, err, queen.ErrClosed, "Consume")
	err = c.Queue("q").Consume(t.Context(), func(context.Context, []*queen.Message) error { return nil })
	assert.ErrorIs(t, err, queen.ErrClosed, "batch Consume")
	assert.Empty(t, rec.All(), "nothing is sent after Close")
}

// A Client made without WithHTTPClient sends through http.DefaultTransport as it is when the
// request leaves, so tools that replace it (httpmock.Activate, say) see the SDK's requests.
// Not parallel: it replaces the process-wide http.DefaultTransport.
func TestADefaultClientSendsThroughTheCurrentDefaultTransport(t *testing.T) {
	httpmock.Activate()
	t.Cleanup(httpmock.DeactivateAndReset)
	httpmock.RegisterResponder(http.MethodGet, "http://mocked.test/api/v1/pop/queue/q", httpmock.NewStringResponder(204, ""))

	c, err := queen.New("http://mocked.test")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	msgs, err := c.Queue("q").Pop(t.Context())
	require.NoError(t, err)
	assert.Empty(t, msgs)
	msgs, err = c.Queue("q").Wait(true).Timeout(time.Second).Pop(t.Context())
	require.NoError(t, err, "long polls too")
	assert.Empty(t, msgs)
	assert.Equal(t, 2, httpmock.GetTotalCallCount())
}

// WithHTTPClient: the SDK keeps using the http.Client it was given, whatever its Transport is
// when a request leaves: long polls too, though they ignore its Timeout.
func TestAGivenHTTPClientsTransportIsReadAtEachRequest(t *testing.T) {
	t.Parallel()
	// A timeout long enough never to fire on a loaded machine: what is tested is that the
	// transport is read at each request, not the deadline.
	hc := &http.Client{Timeout: time.Minute}
	c, err := queen.New("http://mocked.test", queen.WithHTTPClient(hc))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	mt := httpmock.NewMockTransport()
	hc.Transport = mt
	mt.RegisterResponder(http.MethodGet, "http://mocked.test/api/v1/pop/queue/q", httpmock.NewStringResponder(204, ""))

	_, err = c.Queue("q").Pop(t.Context())
	require.NoError(t, err)
	_, err = c.Queue("q").Wait(true).Timeout(time.Second).Pop(t.Context())
	require.NoError(t, err, "a long poll goes through the same transport")
	assert.Equal(t, 2, mt.GetTotalCallCount())
}

// New refuses a bad URL or option, naming it, and makes no network call.
func TestNewRefusesBadURLsAndOptions(t *testing.T) {
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

// A request with the wrong token is refused with 401, and the error does not hold the token.
func TestTheTokenIsSentAndAWrongOneIsRefused(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t, queentest.WithToken("right-token"))
		for _, tc := range []struct {
			token string
			ok    bool
		}{{"right-token", true}, {"wrong-token", false}} {
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			c, err := queen.New(srv.URL(), queen.WithToken(tc.token), queen.WithHTTPClient(&http.Client{Transport: tr}))
			require.NoError(t, err)
			_, err = c.Queue("secure").Push(t.Context(), queen.PushItem{Data: 1})
			if tc.ok {
				require.NoError(t, err)
			} else {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, 401, apiErr.StatusCode)
				assert.NotContains(t, err.Error(), tc.token)
			}
			require.NoError(t, c.Close())
		}
	})
}

// Do sends any request with the client's auth and retries, decodes a 2xx answer, and reports
// other answers as *APIError, JSON or not.
func TestDoSendsAnyRequestAndDecodesItsAnswer(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterResponder("GET", mockBase+"/api/v1/dlq", rec.Respond(200, `{"messages":[],"pagination":{"limit":100,"offset":0}}`))
	mt.RegisterResponder("DELETE", mockBase+"/api/v1/dlq/x", rec.Respond(404, `{"error":"dead letter not found"}`))
	mt.RegisterResponder("POST", mockBase+"/api/v1/dlq/y/replay", rec.Respond(404, `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`))
	mt.RegisterResponder("POST", mockBase+"/api/v1/configure", rec.Respond(200, `{"configured":true}`))

	var raw json.RawMessage
	require.NoError(t, c.Do(t.Context(), "GET", "/api/v1/dlq", map[string][]string{"queue": {"a b"}}, nil, &raw))
	assert.JSONEq(t, `{"messages":[],"pagination":{"limit":100,"offset":0}}`, string(raw))
	assert.Equal(t, "queue=a+b", rec.All()[0].RawQuery)

	err := c.Do(t.Context(), "DELETE", "/api/v1/dlq/x", nil, nil, nil)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, queen.APIError{StatusCode: 404, Message: "dead letter not found", Method: "DELETE", Path: "/api/v1/dlq/x"}, *apiErr)

	err = c.Do(t.Context(), "POST", "/api/v1/dlq/y/replay", nil, nil, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.True(t, apiErr.NotJSON)
	assert.Equal(t, 404, apiErr.StatusCode)

	var out struct{ Configured bool }
	require.NoError(t, c.Do(t.Context(), "POST", "/api/v1/configure", nil, map[string]string{"queue": "q"}, &out))
	assert.True(t, out.Configured)
	jsonEq(t, `{"queue":"q"}`, rec.All()[3].Body)
}

// A redirect is never followed: a 3xx is the call's answer, as an *APIError.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			t.Errorf("the redirect was followed: %s %s", r.Method, r.URL.Path)
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	c := stubClient(t, url)
	m := &queen.Message{TransactionID: "t", PartitionID: "p", LeaseID: "l"}
	_, err := c.Ack(t.Context(), m, queen.StatusCompleted)
	var apiErr *queen.APIError
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	assert.Equal(t, http.StatusTemporaryRedirect, apiErr.StatusCode)
	_, err = c.Queue("orders").Pop(t.Context())
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	assert.Equal(t, http.StatusTemporaryRedirect, apiErr.StatusCode)
	assert.Len(t, stub.All(), 2, "one request per call, no retry")
}
