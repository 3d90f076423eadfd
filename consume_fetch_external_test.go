package queen_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// 401 and 403 end Consume at once with the *APIError, after one pop.
func TestAnAuthRefusalEndsConsume(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		t.Run("401", func(t *testing.T) {
			t.Parallel()
			_, tap, c := tapped(t, m, queentest.WithToken("secret"))
			err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			var api *queen.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, 401, api.StatusCode)
			assert.Len(t, tap.All(), 1, "not retried")
		})
		t.Run("403", func(t *testing.T) {
			t.Parallel()
			srv, tap, c := tapped(t, m)
			srv.Fail(queentest.Fault{Route: "pop", Status: 403, Times: 100})
			err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
			var api *queen.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, 403, api.StatusCode)
			assert.Len(t, tap.All(), 1, "not retried")
		})
	})
}

// A 401 that ends Consume is returned to the caller, which decides what to log: the client does
// not log it at error level too.
func TestAnAuthRefusalIsReturnedAndNotLogged(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		var logs testutil.LogBuffer
		logger := slog.New(slog.NewJSONHandler(&logs, nil))
		_, _, c := tappedWith(t, m, []queen.Option{queen.WithLogger(logger)}, queentest.WithToken("secret"))
		err := c.Queue("q").Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
		var api *queen.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, 401, api.StatusCode)
		assert.NotContains(t, logs.String(), `"level":"ERROR"`)
	})
}

// Transient pop failures are reported to OnError and retried; they never end the loop.
func TestTransientPopFailuresAreReportedAndRetried(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m)
		push(t, c, "q", "", 0)
		srv.Fail(queentest.Fault{Route: "pop", Status: 503, Times: 6})
		var mu sync.Mutex
		var reported []error
		err := c.Queue("q").Limit(1).OnError(func(msg *queen.Message, err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}).Each().Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		assert.NotEmpty(t, reported, "the outage reached OnError")
	})
}

// A discovery pop against a broker without that route (0.15 answers it with a page, not JSON)
// ends Consume at once: unsupported, after one pop.
func TestADiscoveryPopTheBrokerLacksEndsConsume(t *testing.T) {
	t.Parallel()
	_, tap, c := tapped(t, testmode.Modes[1])
	err := c.Queue("").Namespace("ns").Task("t").Each().
		Consume(testutil.Context(t), func(context.Context, *queen.Message) error { return nil })
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.NotErrorIs(t, err, queen.ErrInvalidOption)
	var api *queen.APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, 404, api.StatusCode)
	assert.True(t, api.NotJSON)
	assert.Len(t, tap.All(), 1, "not retried")
}

// A Consume pop waits (30s unless set) under autopilot, leaving out batch and partitions unless
// they are set; it names no group in queue mode and states a named group's start on every pop
// (a 0.15 broker's default start is "all"); Consume's AutoAck is never sent.
func TestAConsumePopsQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    func(c *queen.Client) queen.QueueBuilder
		want url.Values
	}{
		{"queue mode", func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders") },
			url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}},
		// A new group's first pop on a client does not wait, so that a 0.15 broker stores no
		// start while it waits.
		{"named group", func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
			url.Values{"wait": {"false"}, "autopilot": {"true"},
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

// A captured 0.15 multi-partition pop reaches a BatchHandler as one call per partition, in
// offset order, and each partition's batch is acked with its own partitionId (the one it was
// delivered with, never one the client made) and the shared leaseId, in the group that popped it.
func TestA015MultiPartitionPopIsHandledAndAckedPerPartition(t *testing.T) {
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
		return httpmock.NewStringResponse(200, pop015MultiPartition), nil
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

// pop015MultiPartition is a captured 0.15 pop that claimed partitions a, b and c.
const pop015MultiPartition = `{"consumerGroup":"g1","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"c1"},"id":"01a22946-3ce9-7002-9add-ba8d32a9667a","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","producerSub":null,"traceId":null,"transactionId":"7e5db345-9313-47a7-a7ae-adcc3655c296"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"c2"},"id":"01a22946-3cea-7000-bf26-f8f3d4ca3281","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","producerSub":null,"traceId":null,"transactionId":"3fc8acc6-4225-4935-9fca-0be27073be2a"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"b1"},"id":"01a22946-3ce9-7000-8203-549d80a94cda","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"b","partitionId":"2ad1bdd9-9f54-4db5-afb3-284bc7ccd902","producerSub":null,"traceId":null,"transactionId":"1cf9e3f4-1abf-49c8-9925-b5df518e3d4a"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"b2"},"id":"01a22946-3ce9-7001-9006-b2b9ed173e76","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"b","partitionId":"2ad1bdd9-9f54-4db5-afb3-284bc7ccd902","producerSub":null,"traceId":null,"transactionId":"04bf2764-4bd7-47eb-905b-684a5d98a9ab"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"a1"},"id":"01a22946-3ce7-7000-aac3-9e22bab35ad9","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"a","partitionId":"7825f909-9980-40a9-94d6-180519b1f119","producerSub":null,"traceId":null,"transactionId":"164c33e7-dcf1-4a7d-84e6-536d80d1be06"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:38.703358Z","data":{"p":"a2"},"id":"01a22946-3ce8-7000-bc49-67337f6bc196","leaseId":"01a22946-3d01-7000-a784-4350e5f222ab","partition":"a","partitionId":"7825f909-9980-40a9-94d6-180519b1f119","producerSub":null,"traceId":null,"transactionId":"8046ca33-2a56-41e7-bfc9-462d38207d15"}],"partition":"c","partitionId":"14dd3b14-ff7b-4aba-8592-ddc5967a708b","partitionsClaimed":3,"queue":"smoke-multi","success":true}`

// Limit is not Batch: the pop of a Consume with Limit(1) and no Batch leaves the batch to the
// broker's autopilot.
func TestLimitLeavesTheBatchToAutopilot(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pops, acks testutil.Spy
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Respond(200, pop20))
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`), acks.Respond(200, `[{"success":true}]`))
	err := c.Queue("orders").Limit(1).Each().Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
	require.NoError(t, err)
	first := queryOf(t, pops.All()[0])
	assert.Equal(t, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}, first)
}

// Empty answers never make the loop spin: with Timeout(0) every long poll answers at once, so
// the loop pauses between them.
func TestEmptyAnswersDoNotMakeTheLoopSpin(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var pops testutil.Spy
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Respond(204, ""))
	err := c.Queue("orders").Timeout(0).IdleTimeout(500*time.Millisecond).Each().
		Consume(t.Context(), func(context.Context, *queen.Message) error { return nil })
	require.NoError(t, err)
	assert.Less(t, len(pops.All()), 20, "an idle queue costs a few pops per second, not a busy loop")
}

// Partitions set by the user are sent as set, under autopilot and with the default
// Concurrency(1) too.
func TestPartitionsAreSentAsSet(t *testing.T) {
	t.Parallel()
	pops, _ := consumeOnce(t, func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Partitions(4) },
		pop20, func(context.Context, *queen.Message) error { return nil })
	assert.Equal(t, "4", queryOf(t, pops[0]).Get("partitions"))
}

// A captured 0.15 answer to a default Consume pop (autopilot, no batch) holds one message and no
// offset: the broker does not size pops, so the loop's next pop carries a batch it sized itself.
func TestTheLoopSizesTheBatchAfterAnAnswerWithoutOffsets(t *testing.T) {
	t.Parallel()
	single := testutil.CaptureNamed(t, captures015, "pop", "queue mode pop, default batch (1)")
	ackAnswer := `[{"dlq":false,"error":null,"index":0,"leaseReleased":true,"partitionName":"p1","queueName":"smoke-basic","success":true,"transactionId":"tx-basic-3"}]`

	c, mt := mockClient(t)
	var pops, acks testutil.Spy
	mt.RegisterRegexpResponder("GET", mustRegexp(`/api/v1/pop`), pops.Respond(single.Status, single.Response))
	mt.RegisterRegexpResponder("POST", mustRegexp(`/api/v1/ack`), acks.Respond(200, ackAnswer))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int32
	err := c.Queue("smoke-basic").Each().Consume(ctx, func(context.Context, *queen.Message) error {
		if calls.Add(1) == 2 {
			cancel()
		}
		return nil
	})
	require.NoError(t, err)
	sent := pops.All()
	require.GreaterOrEqual(t, len(sent), 2)
	first, second := queryOf(t, sent[0]), queryOf(t, sent[1])
	assert.Equal(t, url.Values{"wait": {"true"}, "timeout": {"30000"}, "autopilot": {"true"}}, first,
		"the first pop leaves the batch to autopilot")
	batch, err := strconv.Atoi(second.Get("batch"))
	require.NoError(t, err, "the second pop sizes the batch: %v", second)
	assert.GreaterOrEqual(t, batch, 100)
	assert.LessOrEqual(t, batch, 1000)
	assert.Equal(t, "true", second.Get("autopilot"), "autopilot is still asked for")
}

// Slots that go on with their own pops while the loop waits for a slot, for room under the
// in-flight bound or for Limit must never leave an answer waiting on a loop that waits on
// them: every shape consumes its whole backlog, each message once, to the end of its Limit.
func TestSlotsGoingOnByThemselvesReachTheEndOfTheBacklog(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		for _, shape := range []struct{ concurrency, batch, messages int }{
			{8, 1, 400}, {8, 10, 3000}, {3, 7, 1000}, {8, 100, 6000},
		} {
			t.Run(fmt.Sprintf("concurrency=%d/batch=%d", shape.concurrency, shape.batch), func(t *testing.T) {
				t.Parallel()
				_, c := modeClient(t, m)
				items := make([]queen.PushItem, shape.messages)
				for i := range items {
					items[i] = queen.PushItem{Data: map[string]int{"n": i}, Partition: strconv.Itoa(i % 8)}
				}
				for chunk := range slices.Chunk(items, 1000) {
					_, err := c.Queue("backlog").Push(t.Context(), chunk...)
					require.NoError(t, err)
				}
				var mu sync.Mutex
				seen := map[string]int{}
				done := make(chan error, 1)
				go func() {
					done <- c.Queue("backlog").Batch(shape.batch).Concurrency(shape.concurrency).Limit(shape.messages).
						Consume(t.Context(), func(_ context.Context, msgs []*queen.Message) error {
							mu.Lock()
							defer mu.Unlock()
							for _, msg := range msgs {
								seen[msg.TransactionID]++
							}
							return nil
						})
				}()
				require.NoError(t, testutil.Recv(t, done, "Consume to reach its Limit"))
				assert.Len(t, seen, shape.messages)
				for id, n := range seen {
					require.Equal(t, 1, n, "message %s handled more than once", id)
				}
			})
		}
	})
}
