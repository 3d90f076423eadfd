package queen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No error string contains the token.
func TestAcceptanceTokenNeverInErrors(t *testing.T) {
	t.Parallel()
	const tok = "s3cr3t-token-value"
	srv := testmode.Modes[0].Server(t, queentest.WithToken("other"))
	c, err := queen.New(srv.URL(), queen.WithToken(tok), queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Queue("q").Pop(testutil.Context(t))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	err = c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
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
