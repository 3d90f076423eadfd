package queen_test

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// An answer larger than WithMaxResponseBytes fails, naming the limit.
func TestAnAnswerOverTheLimitFailsNamingIt(t *testing.T) {
	t.Parallel()
	srv := testmode.Modes[0].Server(t)
	c, err := queen.New(srv.URL(), queen.WithMaxResponseBytes(512))
	require.NoError(t, err)
	defer c.Close()
	big := strings.Repeat("x", 2048)
	_, err = c.Queue("q").Push(testutil.Context(t), queen.PushItem{Data: big})
	require.NoError(t, err)
	_, err = c.Queue("q").Pop(testutil.Context(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "512")
}

// streamGiB answers every request with 200 and up to 1 GiB of a JSON-looking body, without a
// Content-Length, stopping when the client goes away.
func streamGiB(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = ' '
	}
	chunk[0] = '['
	for range 1 << 10 {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// A 1 GiB pop answer is refused once the limit is read, and the client never holds much more
// than the limit. Not parallel: it measures the process's allocations.
func TestMaxResponseBytesBoundsMemory(t *testing.T) {
	_, url := brokerStub(t, streamGiB)
	const limit = 1 << 20
	c := stubClient(t, url, queen.WithMaxResponseBytes(limit), queen.WithRetry(0, 0, 0))

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Queue("orders").Pop(t.Context())
	runtime.ReadMemStats(&after)

	require.Error(t, err)
	assert.Contains(t, err.Error(), strconv.Itoa(limit), "names the limit")
	assert.Contains(t, err.Error(), "/api/v1/pop/queue/orders", "names the route")
	assert.Contains(t, err.Error(), "read "+strconv.Itoa(limit+1)+" bytes", "names the size read")
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(32<<20), "allocated %d bytes for a 1 GiB answer", allocated)
}

// The default limit is 64 MiB; an answer announcing more is refused before it is read.
func TestMaxResponseBytesDefaultRefusesAnnouncedSize(t *testing.T) {
	t.Parallel()
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(64<<20+1))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("[")) // the rest never comes
	})
	c := stubClient(t, url, queen.WithRetry(0, 0, 0))
	_, err := c.Queue("orders").Pop(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), strconv.Itoa(64<<20), "names the default limit")
	assert.Contains(t, err.Error(), strconv.Itoa(64<<20+1), "names the announced size")
}

// An answer at the limit is read whole.
func TestMaxResponseBytesAllowsAnswerAtTheLimit(t *testing.T) {
	t.Parallel()
	body := `[{"index":0,"transaction_id":"t","status":"queued","message_id":"m","partition_id":"p","offset":0}]`
	_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusCreated, body) })
	c := stubClient(t, url, queen.WithMaxResponseBytes(int64(len(body))))
	res, err := c.Queue("orders").Push(t.Context(), queen.PushItem{Data: 1, TransactionID: "t"})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, "queued", res[0].Status)
}

func TestMaxResponseBytesRefusesNonPositive(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, -1} {
		_, err := queen.New("http://127.0.0.1:1", queen.WithMaxResponseBytes(n))
		assert.ErrorIs(t, err, queen.ErrInvalidOption)
		assert.ErrorContains(t, err, "maxResponseBytes")
	}
}
