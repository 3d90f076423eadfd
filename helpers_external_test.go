package queen_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// tapped is a broker in mode m behind a spy, and a client of it.
func tapped(t *testing.T, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *testutil.Spy, *queen.Client) {
	t.Helper()
	return tappedWith(t, m, nil, opts...)
}

// tappedWith is tapped with extra client options.
func tappedWith(t *testing.T, m testmode.Mode, copts []queen.Option, opts ...queentest.Option) (*queentest.Server, *testutil.Spy, *queen.Client) {
	t.Helper()
	srv := m.Server(t, opts...)
	tap, url := testutil.NewSpy(t, srv.Handler())
	c, err := queen.New(url, append([]queen.Option{queen.WithRetry(3, time.Millisecond, 5*time.Millisecond)}, copts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, tap, c
}

// push pushes one item per data value to the queue's partition ("": the default one).
func push(t *testing.T, c *queen.Client, queue, partition string, data ...any) {
	t.Helper()
	items := make([]queen.PushItem, len(data))
	for i, d := range data {
		items[i] = queen.PushItem{Data: d}
	}
	b := c.Queue(queue)
	if partition != "" {
		b = b.Partition(partition)
	}
	if _, err := b.Push(testutil.Context(t), items...); err != nil {
		t.Fatal(err)
	}
}

// sentAcks are the ack items the SDK sent, from /ack, /ack/batch and transactions, in order.
func sentAcks(spy *testutil.Spy) []map[string]any {
	var out []map[string]any
	for _, r := range spy.All() {
		if !strings.Contains(r.Path, "/ack") && !strings.Contains(r.Path, "/transaction") {
			continue
		}
		var v any
		if json.Unmarshal(r.Body, &v) != nil {
			continue
		}
		collectAcks(v, &out)
	}
	return out
}

func collectAcks(v any, out *[]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["status"]; ok {
			if _, ok := v["transactionId"]; ok {
				*out = append(*out, v)
				return
			}
		}
		for _, e := range v {
			collectAcks(e, out)
		}
	case []any:
		for _, e := range v {
			collectAcks(e, out)
		}
	}
}

// statuses are the statuses of the acks the SDK sent, in order.
func statuses(tap *testutil.Spy) []string {
	var out []string
	for _, a := range sentAcks(tap) {
		out = append(out, a["status"].(string))
	}
	return out
}

// consumeOnce runs b's Consume against canned answers: the first pop leases popBody, every
// later pop is empty, and every ack succeeds. It returns once h ran for the first message,
// with the requests the broker saw.
func consumeOnce(t *testing.T, b func(c *queen.Client) queen.QueueBuilder, popBody string,
	h queen.Handler) (pops, acks []testutil.Request) {
	t.Helper()
	return consumeUntil(t, b, popBody, h, func(*queen.Message) bool { return true })
}

// consumeUntil is consumeOnce, stopping after the handler ran for a message last approves.
func consumeUntil(t *testing.T, b func(c *queen.Client) queen.QueueBuilder, popBody string,
	h queen.Handler, last func(m *queen.Message) bool) (pops, acks []testutil.Request) {
	t.Helper()
	c, mt := mockClient(t)
	var popRec, ackRec testutil.Spy
	var mu sync.Mutex
	served := 0
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop`), popRec.Answer(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		served++
		if served > 1 {
			return httpmock.NewStringResponse(204, ""), nil
		}
		return httpmock.NewStringResponse(200, popBody), nil
	}))
	mt.RegisterRegexpResponder(http.MethodPost, mustRegexp(`/api/v1/ack`), ackRec.Answer(func(req *http.Request) (*http.Response, error) {
		return httpmock.NewStringResponse(200, `[{"index":0,"transactionId":"order-9137","success":true,"error":null,"dlq":false,"leaseReleased":true}]`), nil
	}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := b(c).Each().Consume(ctx, func(hctx context.Context, m *queen.Message) error {
		if last(m) {
			defer cancel()
		}
		return h(hctx, m)
	})
	require.NoError(t, err, "a stop by ctx returns nil")
	return popRec.All(), ackRec.All()
}

func queryOf(t *testing.T, r testutil.Request) url.Values {
	t.Helper()
	q, err := url.ParseQuery(r.RawQuery)
	require.NoError(t, err)
	return q
}

const secretToken = "s3cr3t-t0ken-value"

// brokerStub is a broker that answers as h says, behind a spy that sees every request.
func brokerStub(t *testing.T, h http.HandlerFunc) (*testutil.Spy, string) {
	t.Helper()
	return testutil.NewSpy(t, h)
}

// stubClient is a Client with its own transport, fast retries and the given options.
func stubClient(t *testing.T, url string, opts ...queen.Option) *queen.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]queen.Option{
		queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}),
		queen.WithRetry(3, time.Millisecond, 2*time.Millisecond),
	}, opts...)
	c, err := queen.New(url, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// The integration tests run against the reference broker as 2.0 and as 0.15; where the two
// answer differently, the expectation is written per mode.

// modeClient starts a reference broker in mode m and a Client for it.
func modeClient(t *testing.T, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *queen.Client) {
	t.Helper()
	return brokerClient(t, m.Options(opts...)...)
}

// leaseOn015 gives the queue a leaseTime of seconds on 0.15, which ignores a pop's lease
// time and leases for the queue's (300 s for a queue a push creates).
func leaseOn015(t *testing.T, m testmode.Mode, c *queen.Client, queue string, seconds int) {
	t.Helper()
	if m.V015 {
		body := map[string]any{"queue": queue, "options": map[string]any{"leaseTime": seconds}}
		require.NoError(t, c.Do(t.Context(), http.MethodPost, "/api/v1/configure", nil, body, nil))
	}
}

// brokerClient starts a reference broker and a Client for it.
func brokerClient(t *testing.T, opts ...queentest.Option) (*queentest.Server, *queen.Client) {
	t.Helper()
	srv := queentest.NewServer(t, opts...)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := queen.New(srv.URL(), queen.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}),
		queen.WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return srv, c
}

func pushN(t *testing.T, b queen.QueueBuilder, n int) []queen.PushResult {
	t.Helper()
	items := make([]queen.PushItem, n)
	for i := range items {
		items[i] = queen.PushItem{Data: map[string]int{"n": i}}
	}
	res, err := b.Push(t.Context(), items...)
	require.NoError(t, err)
	require.Len(t, res, n)
	return res
}

// pop20 is a 2.0 pop answer: one leased message, its queue, partition, lease and group.
const pop20 = `{"success":true,"queue":"orders","partition":"4","partitionId":"pid-4","leaseId":"lid-1",
 "consumerGroup":"billing","partitionsClaimed":1,
 "messages":[{"id":"mid-1","transactionId":"order-9137","traceId":null,"data":{"n":1},
   "producerSub":null,"createdAt":"2026-11-29T21:33:13.427069Z","partitionId":"pid-4","partition":"4",
   "leaseId":"lid-1","consumerGroup":"billing","offset":6,"deliveryAttempt":1}]}`

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

// popOne pops the message of a canned pop answer, for ack and renew tests.
func popOne(t *testing.T, c *queen.Client, mt *httpmock.MockTransport, body string, group string) *queen.Message {
	t.Helper()
	var rec testutil.Spy
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop/`), rec.Respond(200, body))
	b := c.Queue("q")
	if group != "" {
		b = b.Group(group)
	}
	msgs, err := b.Pop(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs[0]
}

// jsonEq checks that a request's body is the JSON want.
func jsonEq(t *testing.T, want string, got []byte) {
	t.Helper()
	require.True(t, json.Valid(got), "not JSON: %s", got)
	require.JSONEq(t, want, string(got))
}

var mustRegexp = regexp.MustCompile

// captures015 is the file of a real 0.15 broker's pop, push, ack, extend and transaction
// exchanges, kept verbatim.
const captures015 = "testdata/wire015_captures.json"
