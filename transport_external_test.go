package queen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A long poll outlives the http.Client's Timeout, bounded by its own timeout plus a margin: an
// ordinary request sent after the poll started is cut by the 100ms Timeout, and only then does
// the broker answer the poll.
func TestALongPollOutlivesTheHTTPClientsTimeout(t *testing.T) {
	t.Parallel()
	pollWaiting := make(chan struct{})
	release := make(chan struct{})
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
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
	c, err := queen.New(url, queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 100 * time.Millisecond}),
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

// A cancelled ctx ends a waiting pop at once, without a retry.
func TestACancelledCtxEndsAWaitingPop(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{})
	stub, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done()
	})
	c := stubClient(t, url)
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
	assert.Len(t, stub.All(), 1, "a cancelled pop is not retried")
}

// No error text holds the token: not one a broker echoes it in, not a transport failure's, not
// a Consume ended by a refused token.
func TestNoErrorTextHoldsTheToken(t *testing.T) {
	t.Parallel()
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		// A broker that echoes the header back in its error.
		writeJSON(w, 400, `{"error":"bad header `+r.Header.Get("Authorization")+`"}`)
	})
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()

	c := stubClient(t, url, queen.WithToken(secretToken))
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

	broker := testmode.Modes[0].Server(t, queentest.WithToken("other"))
	c3 := stubClient(t, broker.URL(), queen.WithToken(secretToken))
	err = c3.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secretToken)
}
