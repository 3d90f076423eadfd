package queen_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Black-box checks of API.md, one item at a time, the way a client of the package sees it.

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

// API.md: Wait "Consume default true", Timeout "default 30s", Autopilot "default true for
// Consume"; R137: batch and partitions left out under autopilot; O13: no consumerGroup in queue
// mode; O14: subscriptionMode on every named-group pop; AutoAck is never sent by Consume.
func TestConsumeDefaultPopQuery_R137_O13_O14(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    func(c *queen.Client) queen.QueueBuilder
		want url.Values
	}{
		{"queue mode", func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders") },
			url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}},
		{"named group", func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
			url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"},
				"consumerGroup": {"billing"}, "subscriptionMode": {"new"}}},
		{"AutoAck(true) stays client-side", func(c *queen.Client) queen.QueueBuilder {
			return c.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).AutoAck(true)
		}, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"},
			"consumerGroup": {"billing"}, "subscriptionMode": {"all"}}},
		{"autopilot off", func(c *queen.Client) queen.QueueBuilder {
			return c.Queue("orders").Autopilot(false).Timeout(5 * time.Second)
		}, url.Values{"wait": {"true"}, "timeout": {"5000"}}},
		{"user-set batch and partitions are sent", func(c *queen.Client) queen.QueueBuilder {
			return c.Queue("orders").Batch(20).Partitions(2).Concurrency(2)
		}, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}, "batch": {"20"}, "partitions": {"2"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pops, _ := consumeOnce(t, tc.b, pop20, func(context.Context, *queen.Message) error { return nil })
			require.NotEmpty(t, pops)
			assert.Equal(t, "/api/v1/pop/queue/orders", pops[0].Path)
			assert.Equal(t, tc.want, queryOf(t, pops[0]))
		})
	}
}

// API.md Consume semantics: nil → completed, an error → failed with its text, Retry → retry,
// DeadLetter → dlq, a panic → failed with "panic: <value>"; the ack echoes leaseId and group.
func TestConsumeHandlerReturnDecidesTheAck_R135(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    queen.Handler
		want string
	}{
		{"nil", func(context.Context, *queen.Message) error { return nil },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"completed"}`},
		{"error", func(context.Context, *queen.Message) error { return errors.New("card declined") },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"failed","error":"card declined"}`},
		{"Retry", func(context.Context, *queen.Message) error { return queen.Retry(errors.New("busy")) },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"retry","error":"busy"}`},
		{"DeadLetter", func(context.Context, *queen.Message) error { return queen.DeadLetter(errors.New("poison")) },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"dlq","error":"poison"}`},
		{"panic", func(context.Context, *queen.Message) error { panic("boom") },
			`{"transactionId":"order-9137","partitionId":"pid-4","leaseId":"lid-1","status":"failed","error":"panic: boom"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, acks := consumeOnce(t, func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
				pop20, tc.h)
			require.Len(t, acks, 1)
			assert.Equal(t, "/api/v1/ack/batch", acks[0].Path)
			jsonEq(t, `{"acknowledgments":[`+tc.want+`],"consumerGroup":"billing"}`, acks[0].Body)
		})
	}
}

// API.md: invalid settings "are reported by the terminal call (Pop, Push, Consume) as an error
// wrapping ErrInvalidOption that names the setting, before any request is sent".
func TestInvalidSettingsOnEveryTerminal(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	cases := map[string]queen.QueueBuilder{
		"batch":            c.Queue("q").Batch(0),
		"batch=10001":      c.Queue("q").Batch(10001),
		"partitions":       c.Queue("q").Partitions(65),
		"partitions=0":     c.Queue("q").Partitions(0),
		"timeout":          c.Queue("q").Timeout(61 * time.Second),
		"timeout<0":        c.Queue("q").Timeout(-time.Second),
		"concurrency":      c.Queue("q").Concurrency(0),
		"leaseTime":        c.Queue("q").LeaseTime(-time.Second),
		"idleTimeout":      c.Queue("q").IdleTimeout(-time.Second),
		"shutdownTimeout":  c.Queue("q").ShutdownTimeout(-time.Second),
		"renewLease":       c.Queue("q").RenewLease(true, -time.Second),
		"queue":            c.Queue(""),
		"subscriptionMode": c.Queue("q").Group("g").SubscriptionMode("new-only"),
	}
	for name, b := range cases {
		setting, _, _ := strings.Cut(name, "=")
		setting, _, _ = strings.Cut(setting, "<")
		terminals := map[string]error{}
		_, terminals["Pop"] = b.Pop(t.Context())
		_, terminals["Push"] = b.Push(t.Context(), queen.PushItem{Data: 1})
		terminals["Consume"] = b.Each().Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
		for terminal, err := range terminals {
			if assert.ErrorIs(t, err, queen.ErrInvalidOption, "%s: %s", name, terminal) {
				assert.Contains(t, strings.ToLower(err.Error()), strings.ToLower(setting), "%s: %s", name, terminal)
			}
		}
	}
	for _, group := range []string{"", "__QUEUE_MODE__"} {
		_, err := c.Queue("q").Group(group).Conflation(true).Pop(t.Context())
		require.ErrorIs(t, err, queen.ErrInvalidOption, "R37: conflation needs a named group, not %q", group)
		assert.Contains(t, err.Error(), "Conflation")
	}
	_, err := c.Queue("q").Group("g").Conflation(true).AutoAck(true).Pop(t.Context())
	require.ErrorIs(t, err, queen.ErrInvalidOption, "Conflation with AutoAck on a Pop")
	assert.Contains(t, err.Error(), "conflation")
	assert.Empty(t, rec.All(), "nothing is sent")
}

// API.md: "ErrClosed after Close" for every call that talks to the broker.
func TestErrClosedAfterClose(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop20, "billing")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[]`))
	require.NoError(t, c.Close())

	_, err := c.Ack(t.Context(), m, queen.StatusCompleted)
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
func TestDefaultClientUsesTheCurrentDefaultTransport(t *testing.T) {
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
func TestWithHTTPClientTransportSetAfterNew(t *testing.T) {
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

// wire-0.15.md E2/E3: a 0.15 multi-partition pop reaches a BatchHandler as one call per
// partition, in offset order, and each partition's batch is acked with its own partitionId and
// the shared leaseId, in the group that popped it (R32, R88, O6, O17).
func TestConsume015MultiPartitionPop_E2_E3(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pops, acks testutil.Spy
	var mu sync.Mutex
	served := false
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop`), pops.Answer(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if served {
			return httpmock.NewStringResponse(200, `{"error":"no_available_partition","messages":[],"success":false}`), nil
		}
		served = true
		return httpmock.NewStringResponse(200, pop015E2), nil
	}))
	mt.RegisterRegexpResponder(http.MethodPost, mustRegexp(`/api/v1/ack/batch`), acks.Answer(func(req *http.Request) (*http.Response, error) {
		return httpmock.NewStringResponse(200, `[{"dlq":false,"error":null,"index":0,"leaseReleased":false,"success":true},{"dlq":false,"error":null,"index":1,"leaseReleased":true,"success":true}]`), nil
	}))

	var calls [][]string
	err := c.Queue("smoke-multi").Group("g1").Concurrency(3).Partitions(3).Limit(6).
		Consume(t.Context(), func(_ context.Context, msgs []*queen.Message) error {
			var ids []string
			for _, m := range msgs {
				ids = append(ids, m.Partition+":"+m.TransactionID)
			}
			mu.Lock()
			calls = append(calls, ids)
			mu.Unlock()
			return nil
		})
	require.NoError(t, err)
	assert.ElementsMatch(t, [][]string{
		{"c:7e5db345-9313-47a7-a7ae-adcc3655c296", "c:3fc8acc6-4225-4935-9fca-0be27073be2a"},
		{"b:1cf9e3f4-1abf-49c8-9925-b5df518e3d4a", "b:04bf2764-4bd7-47eb-905b-684a5d98a9ab"},
		{"a:164c33e7-dcf1-4a7d-84e6-536d80d1be06", "a:8046ca33-2a56-41e7-bfc9-462d38207d15"},
	}, calls)
	q := queryOf(t, pops.All()[0])
	assert.Equal(t, "3", q.Get("partitions"))
	assert.Equal(t, "g1", q.Get("consumerGroup"))

	const lease = `"leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","status":"completed"`
	var bodies []string
	for _, a := range acks.All() {
		bodies = append(bodies, string(a.Body))
	}
	require.Len(t, bodies, 3, "one batch ack per partition")
	want := map[string]string{
		"14dd3b14": `{"consumerGroup":"g1","acknowledgments":[{"transactionId":"7e5db345-9313-47a7-a7ae-adcc3655c296","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b",` + lease + `},{"transactionId":"3fc8acc6-4225-4935-9fca-0be27073be2a","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b",` + lease + `}]}`,
	}
	for _, b := range bodies {
		if strings.Contains(b, "14dd3b14") {
			jsonEq(t, want["14dd3b14"], []byte(b))
		}
	}
}

// wire-0.15.md E2: a multi-partition pop of partitions a, b and c.
const pop015E2 = `{"consumerGroup":"g1","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"c1"},"id":"01a22946-3ce9-7002-9add-ba8d32a9667a","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","producerSub":null,"traceId":null,"transactionId":"7e5db345-9313-47a7-a7ae-adcc3655c296"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"c2"},"id":"01a22946-3cea-7000-bf26-f8f3d4ca3281","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","producerSub":null,"traceId":null,"transactionId":"3fc8acc6-4225-4935-9fca-0be27073be2a"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"b1"},"id":"01a22946-3ce9-7000-8203-549d80a94cda","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"b","partitionId":"2ad1bdd9-9f54-4db5-afb3-284bc7ccd902","producerSub":null,"traceId":null,"transactionId":"1cf9e3f4-1abf-49c8-9925-b5df518e3d4a"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"b2"},"id":"01a22946-3ce9-7001-9006-b2b9ed173e76","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"b","partitionId":"2ad1bdd9-9f54-4db5-afb3-284bc7ccd902","producerSub":null,"traceId":null,"transactionId":"04bf2764-4bd7-47eb-905b-684a5d98a9ab"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"a1"},"id":"01a22946-3ce7-7000-aac3-9e22bab35ad9","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"a","partitionId":"7825f909-9980-40a9-94d6-180519b1f119","producerSub":null,"traceId":null,"transactionId":"164c33e7-dcf1-4a7d-84e6-536d80d1be06"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"a2"},"id":"01a22946-3ce8-7000-bc49-67337f6bc196","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"a","partitionId":"7825f909-9980-40a9-94d6-180519b1f119","producerSub":null,"traceId":null,"transactionId":"8046ca33-2a56-41e7-bfc9-462d38207d15"}],"partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","partitionsClaimed":3,"queue":"smoke-multi","success":true}`

// API.md Namespace/Task: "with Task: discovery pop across queues (Queue name then empty)",
// against the reference broker, for Pop and Consume (R22).
func TestDiscoveryPopAndConsume_R22(t *testing.T) {
	t.Parallel()
	_, c := brokerClient(t)
	ctx := t.Context()
	for _, q := range []struct{ name, ns, task string }{{"invoices", "billing", "send"}, {"other", "shop", "send"}} {
		require.NoError(t, c.Do(ctx, http.MethodPost, "/api/v1/configure", nil,
			map[string]any{"queue": q.name, "namespace": q.ns, "task": q.task}, nil))
	}
	pushN(t, c.Queue("other"), 1)
	pushN(t, c.Queue("invoices"), 2)

	msgs, err := c.Queue("").Namespace("billing").Task("send").Pop(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, "invoices", msgs[0].Queue)
	require.NoError(t, msgs[0].Ack(ctx))

	var got []string
	err = c.Queue("").Namespace("billing").Limit(1).Each().Consume(ctx, func(_ context.Context, m *queen.Message) error {
		got = append(got, m.Queue)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"invoices"}, got)

	msgs, err = c.Queue("").Namespace("billing").Pop(ctx)
	require.NoError(t, err)
	assert.Empty(t, msgs, "both invoices were completed")
}

// Consume semantics: "The text of every error reaches the broker as the ack's error", whatever
// characters it holds; the identifiers go back exactly as they came (O6).
func TestAckErrorTextReachesTheBrokerIntact(t *testing.T) {
	t.Parallel()
	const text = "he said \"no\" \\ <b>&</b>\n\t\u2028 ünï 😀 \x01 end"
	c, mt := mockClient(t)
	m := popOne(t, c, mt, `{"success":true,"queue":"q","leaseId":"l\"1","consumerGroup":"g<1>","messages":[
		{"id":"m","transactionId":"t/1 & \"2\"","partitionId":"p\u00e91","data":1,"offset":0,"deliveryAttempt":1}]}`, "g<1>")
	var rec testutil.Spy
	mt.RegisterRegexpResponder(http.MethodPost, mustRegexp(`/api/v1/ack`),
		rec.Respond(200, `[{"index":0,"success":true,"error":null}]`))
	require.NoError(t, m.DeadLetter(t.Context(), errors.New(text)))
	var body map[string]string
	require.NoError(t, json.Unmarshal(rec.Only(t).Body, &body))
	assert.Equal(t, map[string]string{"transactionId": "t/1 & \"2\"", "partitionId": "p\u00e91", "leaseId": "l\"1",
		"status": "dlq", "consumerGroup": "g<1>", "error": text}, body)
}
