package queentest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

func forModes(t *testing.T, body func(t *testing.T, compat string)) {
	for _, v := range []string{"2.0", "0.15"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			body(t, v)
		})
	}
}

func sdk(t *testing.T, srv *queentest.Server) *queen.Client {
	t.Helper()
	c, err := queen.New(srv.URL(), queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// DeadLetters, Lag and WaitIdle read the broker as a user's test sees it.
func TestAcceptanceInspectionHelpers(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, compat string) {
		srv := queentest.NewServer(t, queentest.WithCompat(compat), queentest.WithManualClock())
		c := sdk(t, srv)
		ctx := testutil.Context(t)
		assert.Zero(t, srv.Lag("q", "g"), "an unknown queue has no lag")
		require.NoError(t, srv.WaitIdle(ctx, "q", "g"), "an unknown queue is idle")
		_, err := c.Queue("q").Push(ctx, queen.PushItem{Data: 1}, queen.PushItem{Data: 2}, queen.PushItem{Data: 3})
		require.NoError(t, err)
		assert.EqualValues(t, 3, srv.Lag("q", "g"), "a group that never popped owes everything")
		assert.EqualValues(t, 3, srv.Lag("q", ""))

		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err = srv.WaitIdle(short, "q", "g")
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)

		idle := make(chan error, 1)
		go func() { idle <- srv.WaitIdle(ctx, "q", "g") }()
		n := 0
		err = c.Queue("q").Group("g").SubscriptionMode(queen.SubscribeAll).RetryBackoff(0, 0).Limit(3).Each().
			Consume(ctx, func(context.Context, *queen.Message) error {
				n++
				if n == 2 {
					return queen.DeadLetter(errors.New("bad"))
				}
				return nil
			})
		require.NoError(t, err)
		select {
		case err := <-idle:
			require.NoError(t, err)
		case <-ctx.Done():
			t.Fatal("WaitIdle did not return once the group finished")
		}
		assert.Zero(t, srv.Lag("q", "g"))
		assert.Equal(t, 1, srv.DeadLetters("q"))
		assert.Equal(t, 0, srv.DeadLetters("other"))
	})
}

func rawPush(t *testing.T, srv *queentest.Server, txID string) (int, error) {
	t.Helper()
	body := `{"items":[{"queue":"q","payload":1,"transactionId":"` + txID + `"}]}`
	req, err := http.NewRequestWithContext(testutil.Context(t), http.MethodPost, srv.URL()+"/api/v1/push", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func stored(t *testing.T, srv *queentest.Server) int64 { return srv.Lag("q", "g") }

// Each kind of Fault does what it says, for Times requests, on its route only.
func TestAcceptanceFaultKinds(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, compat string) {
		t.Run("status", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "push", Status: 503, Times: 2})
			for i := range 2 {
				code, err := rawPush(t, srv, "a"+string(rune('0'+i)))
				require.NoError(t, err)
				assert.Equal(t, 503, code)
			}
			assert.Zero(t, stored(t, srv), "a fault before the broker applies nothing")
			code, err := rawPush(t, srv, "b")
			require.NoError(t, err)
			assert.Less(t, code, 300, "the fault is spent")
			assert.EqualValues(t, 1, stored(t, srv))
		})
		t.Run("other route", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "pop", Status: 500})
			code, err := rawPush(t, srv, "a")
			require.NoError(t, err)
			assert.Less(t, code, 300)
		})
		t.Run("drop", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "push", Drop: true})
			_, err := rawPush(t, srv, "a")
			require.Error(t, err, "the connection closes without an answer")
			assert.Zero(t, stored(t, srv))
		})
		t.Run("after drop", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "push", After: true})
			_, err := rawPush(t, srv, "a")
			require.Error(t, err, "the answer is lost")
			assert.EqualValues(t, 1, stored(t, srv), "but the push was applied")
		})
		t.Run("after status", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "", After: true, Status: 502})
			code, err := rawPush(t, srv, "a")
			require.NoError(t, err)
			assert.Equal(t, 502, code)
			assert.EqualValues(t, 1, stored(t, srv))
		})
		t.Run("delay", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			srv.Fail(queentest.Fault{Route: "push", Delay: 20 * time.Millisecond})
			start := time.Now()
			code, err := rawPush(t, srv, "a")
			require.NoError(t, err)
			assert.Less(t, code, 300)
			assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
		})
		t.Run("sdk push outcome unknown", func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithCompat(compat))
			c := sdk(t, srv)
			srv.Fail(queentest.Fault{Route: "push", After: true})
			_, err := c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: 1})
			assert.ErrorIs(t, err, queen.ErrOutcomeUnknown)
		})
	})
}
