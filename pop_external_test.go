package queen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
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

// A Pop answers at once by default: an empty non-nil slice and a nil error when there is
// nothing, else the message with every field the broker sent.
func TestAPopAnswersAtOnceByDefault(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m)
		msgs, err := c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.NotNil(t, msgs)
		assert.Empty(t, msgs)
		reqs := tap.All()
		require.Len(t, reqs, 1)
		assert.NotContains(t, reqs[0].RawQuery, "wait=true", "Pop does not long-poll by default")
		push(t, c, "q", "", map[string]int{"n": 7})
		msgs, err = c.Queue("q").Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		var v struct{ N int }
		require.NoError(t, msgs[0].Decode(&v))
		assert.Equal(t, 7, v.N)
		assert.Equal(t, "q", msgs[0].Queue)
		assert.Equal(t, "Default", msgs[0].Partition)
		assert.Equal(t, m.Offset(0), msgs[0].Offset)
		assert.Equal(t, m.Attempt(1), msgs[0].DeliveryAttempt)
		assert.NotEmpty(t, msgs[0].LeaseID)
		assert.NotEmpty(t, msgs[0].TransactionID)
		assert.False(t, msgs[0].CreatedAt.IsZero())
	})
}

// A waiting Pop returns an empty answer after its Timeout; a push wakes it.
func TestAWaitingPopEndsEmptyAtItsTimeoutOrWakesOnAPush(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, _, c := tapped(t, m, queentest.WithManualClock())
		msgs, err := c.Queue("q").Wait(true).Timeout(20 * time.Millisecond).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Empty(t, msgs)
		got := make(chan []*queen.Message, 1)
		go func() {
			msgs, _ := c.Queue("q").Wait(true).Timeout(10 * time.Second).Pop(testutil.Context(t))
			got <- msgs
		}()
		push(t, c, "q", "", 1)
		assert.Len(t, testutil.Recv(t, got, "the waiting pop"), 1)
	})
}

// SubscriptionFrom(t) starts a new group at the messages pushed at or after t.
func TestSubscriptionFromStartsANewGroupAtThatTime(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		push(t, c, "q", "", "old")
		srv.Advance(time.Minute)
		from := srv.Now().Add(-time.Second)
		push(t, c, "q", "", "new")
		msgs, err := c.Queue("q").Group("g").SubscriptionFrom(from).Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		var s string
		require.NoError(t, msgs[0].Decode(&s))
		assert.Equal(t, "new", s)
	})
}

// With Namespace or Task (and no queue name), Pop and Consume lease from whichever queue carries
// those labels.
func TestADiscoveryPopLeasesFromTheQueuesWithTheLabels(t *testing.T) {
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

const benchBatch = 100

// BenchmarkPopAck pops 100 messages and acks them with one batch ack, through the SDK and
// through a plain net/http loop sending the same requests, against one in-process reference
// broker. msgs/s and allocs/msg count the pop and the ack only (the refill push is untimed);
// allocations include the broker's, which runs in the same process.
//
//	go test -run '^$' -bench BenchmarkPopAck -benchtime 2000x .
func BenchmarkPopAck(b *testing.B) {
	srv, err := queentest.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	c, err := queen.New(srv.URL(), queen.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	b.Run("sdk", func(b *testing.B) {
		q := c.Queue("bench-sdk")
		pop := q.Batch(benchBatch)
		items := make([]queen.AckItem, 0, benchBatch)
		runPopAck(b, c, q, func() int {
			msgs, err := pop.Pop(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			items = items[:0]
			for _, m := range msgs {
				items = append(items, queen.AckItem{Message: m, Status: queen.StatusCompleted})
			}
			results, err := c.AckBatch(b.Context(), items)
			if err != nil {
				b.Fatal(err)
			}
			return len(results)
		})
	})

	b.Run("raw", func(b *testing.B) {
		popURL := srv.URL() + "/api/v1/pop/queue/bench-raw?batch=100"
		ackURL := srv.URL() + "/api/v1/ack/batch"
		runPopAck(b, c, c.Queue("bench-raw"), func() int {
			resp, err := hc.Get(popURL)
			if err != nil {
				b.Fatal(err)
			}
			var popped struct {
				ConsumerGroup string `json:"consumerGroup"`
				Messages      []struct {
					ID            string          `json:"id"`
					TransactionID string          `json:"transactionId"`
					PartitionID   string          `json:"partitionId"`
					LeaseID       string          `json:"leaseId"`
					Data          json.RawMessage `json:"data"`
				} `json:"messages"`
			}
			err = json.NewDecoder(resp.Body).Decode(&popped)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			type ack struct {
				TransactionID string `json:"transactionId"`
				PartitionID   string `json:"partitionId"`
				LeaseID       string `json:"leaseId"`
				Status        string `json:"status"`
			}
			acks := make([]ack, len(popped.Messages))
			for i, m := range popped.Messages {
				acks[i] = ack{m.TransactionID, m.PartitionID, m.LeaseID, "completed"}
			}
			body, _ := json.Marshal(map[string]any{"acknowledgments": acks})
			resp, err = hc.Post(ackURL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			var results []struct {
				Success bool `json:"success"`
			}
			err = json.NewDecoder(resp.Body).Decode(&results)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			return len(results)
		})
	})
}

// runPopAck refills q with 100 messages (untimed) and runs popAck once per iteration.
func runPopAck(b *testing.B, c *queen.Client, q queen.QueueBuilder, popAck func() int) {
	items := make([]queen.PushItem, benchBatch)
	for i := range items {
		items[i] = queen.PushItem{Data: json.RawMessage(fmt.Sprintf(`{"order":%d,"sku":"A-%04d","qty":3}`, i, i))}
	}
	var before, after runtime.MemStats
	var mallocs uint64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range items {
			items[i].TransactionID = "" // fresh ids each round
		}
		if _, err := q.Push(b.Context(), items...); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&before)
		b.StartTimer()
		if n := popAck(); n != benchBatch {
			b.Fatalf("acked %d messages, want %d", n, benchBatch)
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		b.StartTimer()
	}
	b.StopTimer()
	msgs := float64(b.N * benchBatch)
	b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(mallocs)/msgs, "allocs/msg")
}

// Pushed messages pop in offset order with every field set, and once acked are gone.
func TestPushedMessagesPopInOrderAndAckedOnesAreGone(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, testIntegrationPushPopAck)
}

func testIntegrationPushPopAck(t *testing.T, mode testmode.Mode) {
	_, c := modeClient(t, mode)
	q := c.Queue("orders").Partition("p1")
	pushed := pushN(t, q, 3)
	for i, r := range pushed {
		assert.Equal(t, "queued", r.Status)
		assert.Equal(t, mode.Offset(int64(i)), r.Offset)
	}

	msgs, err := q.Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		assert.Equal(t, mode.Offset(int64(i)), m.Offset)
		assert.Equal(t, mode.Attempt(1), m.DeliveryAttempt)
		assert.Equal(t, pushed[i].TransactionID, m.TransactionID)
		assert.Equal(t, "orders", m.Queue)
		assert.Equal(t, "p1", m.Partition)
		assert.NotEmpty(t, m.LeaseID)
		var v struct{ N int }
		require.NoError(t, m.Decode(&v))
		assert.Equal(t, i, v.N)
		require.NoError(t, m.Ack(t.Context()))
	}
	msgs, err = q.Pop(t.Context())
	require.NoError(t, err)
	assert.Empty(t, msgs)
}

// A group in mode all starts at the oldest message; one in mode new (the default) at what is
// pushed after its first pop.
func TestSubscriptionModesSayWhereANewGroupStarts(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		q := c.Queue("subs")
		pushN(t, q, 2)

		all, err := q.Group("history").SubscriptionMode(queen.SubscribeAll).Batch(10).Pop(t.Context())
		require.NoError(t, err)
		assert.Len(t, all, 2)

		newGroup := q.Group("fresh") // SubscribeNew by default
		none, err := newGroup.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		assert.Empty(t, none)
		pushN(t, q, 1)
		later, err := newGroup.Batch(10).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, later, 1)
		assert.Equal(t, mode.Offset(2), later[0].Offset)
	})
}

// A multi-partition pop shares one lease across its partitions; each message is acked with its
// own partitionId under the shared leaseId.
func TestAMultiPartitionPopIsAckedPartitionByPartition(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		_, c := modeClient(t, mode)
		for _, p := range []string{"a", "b", "c"} {
			pushN(t, c.Queue("multi").Partition(p), 2)
		}
		msgs, err := c.Queue("multi").Group("g").SubscriptionMode(queen.SubscribeAll).Batch(10).Partitions(3).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 6)
		items := make([]queen.AckItem, len(msgs))
		parts := map[string]bool{}
		for i, m := range msgs {
			items[i] = queen.AckItem{Message: m}
			parts[m.PartitionID] = true
			assert.Equal(t, msgs[0].LeaseID, m.LeaseID, "one lease for every claimed partition")
		}
		assert.Len(t, parts, 3)
		results, err := c.AckBatch(t.Context(), items)
		require.NoError(t, err)
		released := 0
		for _, r := range results {
			require.True(t, r.Success, fmt.Sprint(r))
			if r.LeaseReleased {
				released++
			}
		}
		assert.Equal(t, 3, released, "one release per partition")
		assert.False(t, errors.Is(err, queen.ErrLeaseExpired))
	})
}

// Under autopilot a Pop sends autopilot=true and leaves batch and partitions out unless they are
// set: Autopilot(true) and no Batch sends no batch=1.
func TestAnAutopilotPopLeavesTheBatchToTheBroker(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	_, err := c.Queue("orders").Autopilot(true).Pop(t.Context())
	require.NoError(t, err)
	q := queryOf(t, rec.Only(t))
	assert.Equal(t, url.Values{"autopilot": {"true"}}, q)
}

// A start time reaches the broker in RFC 3339 with the caller's offset, its "+" escaped as %2B,
// never as a space (a 0.15 broker silently ignores a time it cannot read).
func TestSubscriptionFromIsSentWithItsOffsetEscaped(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	from := time.Date(2026, 11, 29, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	_, err := c.Queue("q").Group("g").SubscriptionFrom(from).Pop(t.Context())
	require.NoError(t, err)
	assert.Contains(t, rec.Only(t).RawQuery, "subscriptionFrom=2026-11-29T21%3A00%3A00%2B01%3A00")
	rec.Reset()
	_, err = c.Queue("q").Group("g").SubscriptionFrom(time.Unix(0, 0).UTC()).Pop(t.Context())
	require.NoError(t, err)
	assert.Contains(t, rec.Only(t).RawQuery, "subscriptionFrom=1970-01-01T00%3A00%3A00Z")
}

// pop015Group is a captured 0.15 pop of partition p1 for consumerGroup g1, batch 10.
const pop015Group = `{"consumerGroup":"g1","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":1},"id":"01a22945-db81-7000-89ce-1fc92ee081bb","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","producerSub":null,"traceId":null,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":2},"id":"01a22945-db81-7001-9d7d-fce4f486f19a","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","producerSub":null,"traceId":"0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01","transactionId":"0ac1a02e-1b79-4234-aed2-8cedc13f74b6"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":3,"s":"three"},"id":"01a22945-db81-7002-97e6-b5f483cf0bfb","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","producerSub":null,"traceId":null,"transactionId":"tx-basic-3"}],"partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partitionsClaimed":1,"queue":"smoke-basic","success":true}`

// pop015QueueMode is a captured 0.15 queue-mode pop.
const pop015QueueMode = `{"consumerGroup":"__QUEUE_MODE__","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","messages":[{"consumerGroup":"__QUEUE_MODE__","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":3,"s":"three"},"id":"01a22945-db81-7002-97e6-b5f483cf0bfb","leaseId":"01a22946-05c7-7000-bbda-b2a55e0aa081","partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","producerSub":null,"traceId":null,"transactionId":"tx-basic-3"}],"partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partitionsClaimed":1,"queue":"smoke-basic","success":true}`

// A 2.0 message decodes field by field.
func TestA20MessageDecodes(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, pop20))

	msgs, err := c.Queue("orders").Group("billing").Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	m := msgs[0]
	assert.Equal(t, "mid-1", m.ID)
	assert.Equal(t, "order-9137", m.TransactionID)
	assert.Equal(t, "", m.TraceID)
	assert.Equal(t, "orders", m.Queue)
	assert.Equal(t, "4", m.Partition)
	assert.Equal(t, "pid-4", m.PartitionID)
	assert.Equal(t, "billing", m.ConsumerGroup)
	assert.Equal(t, "lid-1", m.LeaseID)
	assert.Equal(t, int64(6), m.Offset)
	assert.Equal(t, 1, m.DeliveryAttempt)
	assert.Equal(t, time.Date(2026, 11, 29, 21, 33, 13, 427069000, time.UTC), m.CreatedAt)
	assert.JSONEq(t, `{"n":1}`, string(m.Data))
	var v struct{ N int }
	require.NoError(t, m.Decode(&v))
	assert.Equal(t, 1, v.N)
}

// 0.15 messages decode field by field, with an unknown offset (-1) and delivery attempt (0).
func TestA015MessageDecodesWithoutOffsetOrAttempt(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, pop015Group))

	msgs, err := c.Queue("smoke-basic").Partition("p1").Group("g1").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		assert.Equal(t, int64(-1), m.Offset, "offset unknown on 0.15 (message %d)", i)
		assert.Equal(t, 0, m.DeliveryAttempt, "deliveryAttempt unknown on 0.15 (message %d)", i)
		assert.Equal(t, "smoke-basic", m.Queue)
		assert.Equal(t, "p1", m.Partition)
		assert.Equal(t, "039cf519-3102-46c2-86d2-8a85fee50b58", m.PartitionID)
		assert.Equal(t, "01a22945-dbbd-7000-ae31-34cbc1c0d5de", m.LeaseID)
		assert.Equal(t, "g1", m.ConsumerGroup)
		assert.Equal(t, 767056000, m.CreatedAt.Nanosecond(), "createdAt keeps microseconds")
	}
	assert.Equal(t, "0b6a3c1e-8c4e-4a8f-9a57-0f1f6a6c0d01", msgs[1].TraceID)
	assert.Equal(t, "tx-basic-3", msgs[2].TransactionID)
	assert.JSONEq(t, `{"n":3,"s":"three"}`, string(msgs[2].Data))

	req := rec.Only(t)
	assert.Equal(t, "/api/v1/pop/queue/smoke-basic/partition/p1", req.Path)
}

// A message's data is the pushed payload unchanged, null and strings included.
func TestAMessagesDataIsThePayloadUnchanged(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	// A captured answer with null and string data.
	mt.RegisterNoResponder(rec.Respond(200, `{"consumerGroup":"__QUEUE_MODE__","leaseId":"01a22946-2ffb-7000-a58d-7457e1ad3b5e","messages":[{"consumerGroup":"__QUEUE_MODE__","createdAt":"2026-11-29T21:46:35.343739Z","data":null,"id":"01a22946-2fca-7000-8ba9-7aa58527d36f","leaseId":"01a22946-2ffb-7000-a58d-7457e1ad3b5e","partition":"Default","partitionId":"06386b86-8df8-4be1-9c4d-f07dc078cbe1","producerSub":null,"traceId":null,"transactionId":"c40b5d9e-327e-4778-8950-199190a29cf1"},{"consumerGroup":"__QUEUE_MODE__","createdAt":"2026-11-29T21:46:35.368625Z","data":"just a string","id":"01a22946-2fe3-7000-85d9-a63447316dcb","leaseId":"01a22946-2ffb-7000-a58d-7457e1ad3b5e","partition":"Default","partitionId":"06386b86-8df8-4be1-9c4d-f07dc078cbe1","producerSub":null,"traceId":null,"transactionId":"ed27a59e-282b-4e5e-a254-3f197c68b226"}],"partition":"Default","partitionId":"06386b86-8df8-4be1-9c4d-f07dc078cbe1","partitionsClaimed":1,"queue":"smoke-nopayload","success":true}`))

	msgs, err := c.Queue("smoke-nopayload").Batch(10).Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	var s string
	require.NoError(t, msgs[1].Decode(&s))
	assert.Equal(t, "just a string", s)
	var p *struct{}
	require.NoError(t, msgs[0].Decode(&p))
	assert.Nil(t, p)
}

// Every "nothing to deliver" answer of both broker versions is an empty slice, not an error.
func TestEveryEmptyAnswerIsAnEmptySlice(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"2.0 bodiless 204", 204, ""},
		{"2.0 conflating group", 200, `{"messages":[]}`},
		{"0.15 lease_held", 200, `{"error":"lease_held","messages":[],"success":false}`},
		{"0.15 partition drained", 200, `{"consumerGroup":"g1","leaseId":"01a22945-dcff-7000-ad31-d83058d96aca","messages":[],"partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partitionsClaimed":1,"queue":"smoke-basic","success":true}`},
		{"0.15 no_available_partition", 200, `{"error":"no_available_partition","messages":[],"success":false}`},
		{"0.15 long-poll timeout", 200, `{"consumerGroup":"g1","leaseId":null,"messages":[],"partition":"p1","partitionId":null,"queue":"smoke-basic","success":true}`},
		{"0.15 wildcard long-poll timeout", 200, `{"consumerGroup":"g1","leaseId":null,"messages":[],"partition":"","partitionId":null,"queue":"smoke-basic","success":true}`},
		{"0.15 partition_not_found", 200, `{"error":"partition_not_found","messages":[],"success":false}`},
		{"0.15 maintenance 204 with a body", 204, `{"messages":[],"paused":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(tc.status, tc.body))
			msgs, err := c.Queue("smoke-basic").Group("g1").Wait(true).Timeout(2 * time.Second).Pop(t.Context())
			require.NoError(t, err)
			require.NotNil(t, msgs)
			require.Empty(t, msgs)
			// A new group's first pop goes without wait, then the waiting pop: both read empty.
			sent := rec.All()
			require.Len(t, sent, 2)
			assert.Equal(t, "false", queryOf(t, sent[0]).Get("wait"))
			assert.Equal(t, "true", queryOf(t, sent[1]).Get("wait"))
		})
	}
}

// A 0.15 database failure answered as 200 is a server error, not an empty pop.
func TestAPopAnsweredWithADatabaseErrorIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  invalid input syntax for type uuid: \"p1\"\nCONTEXT:  PL/pgSQL function ack_messages_v2(jsonb) line 14 at FOR over SELECT rows\n","success":false}`))

	_, err := c.Queue("q").Pop(t.Context())
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "invalid input syntax for type uuid")
	assert.Equal(t, "/api/v1/pop/queue/q", apiErr.Path)
	rec.Only(t) // a 200 is not retried
}

// A 0.15 broker answers the discovery route with an HTML 404: reported as unsupported.
func TestADiscoveryPopA015BrokerLacksIsUnsupported(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Answer(func(req *http.Request) (*http.Response, error) {
		return httpmock.NewStringResponse(404, `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`), nil
	}))

	_, err := c.Queue("").Namespace("billing").Task("invoice").Pop(t.Context())
	require.ErrorIs(t, err, errors.ErrUnsupported)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.StatusCode)
	assert.True(t, apiErr.NotJSON)
	assert.Contains(t, apiErr.Message, "File Not Found")
	req := rec.Only(t)
	assert.Equal(t, "/api/v1/pop", req.Path)
	q, _ := url.ParseQuery(req.RawQuery)
	assert.Equal(t, "billing", q.Get("namespace"))
	assert.Equal(t, "invoice", q.Get("task"))
}

// A Pop's query holds each setting as the broker reads it: a named group always states its start,
// queue mode names no group, booleans are true or false, lease time in whole seconds.
func TestAPopsQuerySaysEverySetting(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 29, 21, 0, 0, 500, time.FixedZone("CET", 3600))
	cases := []struct {
		name string
		b    func(c *queen.Client) queen.QueueBuilder
		want url.Values
		path string
		// first: a new group's first waiting Pop on a client sends a pop without wait first.
		first bool
	}{
		{"queue mode: no group, no subscription, batch 1",
			func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders") },
			url.Values{"batch": {"1"}}, "/api/v1/pop/queue/orders", false},
		{"named group defaults to new",
			func(c *queen.Client) queen.QueueBuilder { return c.Queue("orders").Group("billing") },
			url.Values{"batch": {"1"}, "consumerGroup": {"billing"}, "subscriptionMode": {"new"}}, "/api/v1/pop/queue/orders", false},
		{"subscription all",
			func(c *queen.Client) queen.QueueBuilder {
				return c.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll)
			},
			url.Values{"batch": {"1"}, "consumerGroup": {"billing"}, "subscriptionMode": {"all"}}, "/api/v1/pop/queue/orders", false},
		{"subscriptionFrom as RFC 3339 with the caller's offset",
			func(c *queen.Client) queen.QueueBuilder {
				return c.Queue("orders").Group("billing").SubscriptionFrom(from)
			},
			url.Values{"batch": {"1"}, "consumerGroup": {"billing"}, "subscriptionFrom": {"2026-11-29T21:00:00.0000005+01:00"}}, "/api/v1/pop/queue/orders", false},
		{"every setting",
			func(c *queen.Client) queen.QueueBuilder {
				return c.Queue("a b/c").Partition("p/1").Group("g").Batch(50).Wait(true).
					Timeout(60 * time.Second).LeaseTime(1500 * time.Millisecond).Conflation(true).Autopilot(true)
			},
			url.Values{"batch": {"50"}, "consumerGroup": {"g"}, "subscriptionMode": {"new"}, "wait": {"true"},
				"timeout": {"60000"}, "leaseSeconds": {"2"}, "conflation": {"true"}, "autopilot": {"true"}},
			"/api/v1/pop/queue/a%20b%2Fc/partition/p%2F1", true},
		{"autoAck and partitions",
			func(c *queen.Client) queen.QueueBuilder {
				return c.Queue("orders").AutoAck(true).Partitions(3).Wait(false)
			},
			url.Values{"batch": {"1"}, "autoAck": {"true"}, "partitions": {"3"}, "wait": {"false"}}, "/api/v1/pop/queue/orders", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(204, ""))
			_, err := tc.b(c).Pop(t.Context())
			require.NoError(t, err)
			sent := rec.All()
			if tc.first {
				require.Len(t, sent, 2)
				assert.Equal(t, "false", queryOf(t, sent[0]).Get("wait"), "the first pop does not wait")
				sent = sent[1:]
			}
			require.Len(t, sent, 1)
			req := sent[0]
			assert.Equal(t, tc.path, req.Path)
			got, err := url.ParseQuery(req.RawQuery)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A pop carries the token and the SDK's User-Agent.
func TestAPopCarriesTheTokenAndTheUserAgent(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t, queen.WithToken("tok-123"))
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(204, ""))
	_, err := c.Queue("q").Pop(t.Context())
	require.NoError(t, err)
	h := rec.Only(t).Header
	assert.Equal(t, "Bearer tok-123", h.Get("Authorization"))
	assert.Equal(t, "queen-go/"+queen.Version, h.Get("User-Agent"))
}

// A message field the SDK cannot read must not lose the leased batch.
func TestAnUnreadableCreatedAtDoesNotLoseTheBatch(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"success":true,"queue":"q","leaseId":"l","messages":[
		{"id":"m","transactionId":"t","partitionId":"p","createdAt":"2026-11-29 21:46:13+00","data":1,"offset":-0,"deliveryAttempt":12}]}`))
	msgs, err := c.Queue("q").Pop(t.Context())
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.True(t, msgs[0].CreatedAt.IsZero())
	assert.Equal(t, int64(0), msgs[0].Offset)
	assert.Equal(t, 12, msgs[0].DeliveryAttempt)
}

// An offset that is not an integer makes the answer unreadable: an *APIError.
func TestANonIntegerOffsetIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"success":true,"messages":[{"id":"m","offset":"7"}]}`))
	_, err := c.Queue("q").Pop(t.Context())
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
}

// Every captured 0.15 pop answer decodes: messages field by field as the broker sent them,
// "nothing to deliver" as an empty slice.
func TestEveryCaptured015PopAnswerDecodes(t *testing.T) {
	t.Parallel()
	for _, cp := range testutil.Captures(t, captures015, "pop") {
		t.Run(cp.Name(), func(t *testing.T) {
			t.Parallel()
			var want struct {
				LeaseID  *string `json:"leaseId"`
				Queue    string  `json:"queue"`
				Messages []struct {
					ID, TransactionID, PartitionID, Partition, ConsumerGroup, CreatedAt string
					LeaseID                                                             string `json:"leaseId"`
					TraceID                                                             *string
					Data                                                                json.RawMessage
				} `json:"messages"`
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))

			msgs, err := c.Queue("q").Pop(t.Context())
			require.NoError(t, err)
			require.NotNil(t, msgs)
			require.Len(t, msgs, len(want.Messages))
			for i, w := range want.Messages {
				m := msgs[i]
				assert.Equal(t, w.ID, m.ID)
				assert.Equal(t, w.TransactionID, m.TransactionID)
				assert.Equal(t, w.PartitionID, m.PartitionID)
				assert.Equal(t, w.Partition, m.Partition)
				assert.Equal(t, w.ConsumerGroup, m.ConsumerGroup)
				assert.Equal(t, w.LeaseID, m.LeaseID)
				assert.Equal(t, want.Queue, m.Queue)
				if w.TraceID != nil {
					assert.Equal(t, *w.TraceID, m.TraceID)
				} else {
					assert.Empty(t, m.TraceID)
				}
				assert.JSONEq(t, string(w.Data), string(m.Data))
				created, err := time.Parse(time.RFC3339Nano, w.CreatedAt)
				require.NoError(t, err)
				assert.True(t, created.Equal(m.CreatedAt), "createdAt %s", w.CreatedAt)
				assert.Equal(t, int64(-1), m.Offset, "an unknown offset")
				assert.Zero(t, m.DeliveryAttempt, "an unknown delivery attempt")
			}
		})
	}
}
