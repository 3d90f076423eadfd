package acceptance

import (
	"net/http"
	"testing"
	"time"
)

var (
	popTopKeys = []string{"success", "queue", "partition", "partitionId", "leaseId", "consumerGroup", "partitionsClaimed", "messages"}
	popMsgKeys = []string{"id", "transactionId", "traceId", "data", "producerSub", "createdAt", "partitionId", "partition", "leaseId", "consumerGroup", "offset", "deliveryAttempt"}
)

func TestPop(t *testing.T) {
	t.Parallel()
	t.Run("shape", func(t *testing.T) {
		b := start(t)
		pushed := b.push(item("orders", "4", "order-9137", obj{"n": 1}))
		p := b.pop("/api/v1/pop/queue/orders?consumerGroup=billing&subscriptionMode=all")
		hasKeys(t, p, popTopKeys...)
		eq(t, p, "success", true)
		eq(t, p, "queue", "orders")
		eq(t, p, "partition", "4")
		eq(t, p, "partitionId", pushed[0]["partition_id"])
		eq(t, p, "consumerGroup", "billing")
		eq(t, p, "partitionsClaimed", 1)
		if str(t, p, "leaseId") == "" {
			t.Fatal("empty leaseId")
		}
		m := msgs(t, p)[0]
		hasKeys(t, m, popMsgKeys...)
		eq(t, m, "id", pushed[0]["message_id"])
		eq(t, m, "transactionId", "order-9137")
		eq(t, m, "traceId", nil)
		eq(t, m, "producerSub", nil)
		eq(t, m, "partition", "4")
		eq(t, m, "leaseId", p["leaseId"])
		eq(t, m, "consumerGroup", "billing")
		eq(t, m, "offset", 0)
		eq(t, m, "deliveryAttempt", 1)
		eq(t, sub(t, m, "data"), "n", 1)
		isTime(t, m, "createdAt")
	})
	t.Run("queue_mode_names", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		p := b.pop("/api/v1/pop/queue/q")
		eq(t, p, "consumerGroup", "__QUEUE_MODE__")
		wantOffsets(t, msgs(t, p), 0) // Batch defaults to 1
		// The same group under its explicit name and an empty name: the lease blocks both.
		b.get("/api/v1/pop/queue/q?consumerGroup=__QUEUE_MODE__").empty()
		b.get("/api/v1/pop/queue/q?consumerGroup=").empty()
	})
	t.Run("empty_and_unknown_create_nothing", func(t *testing.T) {
		b := start(t)
		b.get("/api/v1/pop/queue/nope").empty()
		b.get("/api/v1/pop/queue/nope/partition/x").empty()
		b.get("/api/v1/status/queues/nope").fails(http.StatusNotFound)
		b.pushN("q", "p", 1)
		b.get("/api/v1/pop/queue/q/partition/other").empty()
		d := b.get("/api/v1/status/queues/q").obj(http.StatusOK)
		if n := len(list(t, d, "partitions")); n != 1 {
			t.Fatalf("%d partitions after a pop of an unknown one, want 1", n)
		}
		b.pop("/api/v1/pop/queue/q")
		b.get("/api/v1/pop/queue/q").empty() // the only partition is leased
	})
	t.Run("partition_route_ignores_partitions", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 2)
		b.pushN("q", "b", 2)
		p := b.pop("/api/v1/pop/queue/q/partition/b?batch=10&partitions=5")
		eq(t, p, "partition", "b")
		eq(t, p, "partitionsClaimed", 1)
		wantOffsets(t, msgs(t, p), 0, 1)
	})
	t.Run("multi_partition_budget", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 3)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 3)
		b.advance(time.Millisecond)
		b.pushN("q", "c", 3)
		p := b.pop("/api/v1/pop/queue/q?batch=5&partitions=3")
		ms := msgs(t, p)
		if len(ms) != 5 {
			t.Fatalf("%d messages, want the budget 5", len(ms))
		}
		eq(t, p, "partitionsClaimed", 2)
		lease := p["leaseId"]
		order := []string{}
		for _, m := range ms {
			eq(t, m, "leaseId", lease)
			if n := len(order); n == 0 || order[n-1] != m["partition"] {
				order = append(order, m["partition"].(string))
			}
		}
		if len(order) != 2 || order[0] != "a" || order[1] != "b" {
			t.Fatalf("partitions in answer %v, want a then b, each contiguous", order)
		}
		wantOffsets(t, ms, 0, 1, 2, 0, 1)
		eq(t, p, "partition", "a")
		eq(t, p, "partitionId", ms[0]["partitionId"])
	})
	t.Run("huge_batch", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?batch=99999999")), 0, 1, 2)
	})
	t.Run("autoAck", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		p := b.pop("/api/v1/pop/queue/q?autoAck=true&batch=2")
		eq(t, p, "leaseId", "")
		for _, m := range msgs(t, p) {
			eq(t, m, "leaseId", "")
		}
		// No lease remains: the next pop takes the rest at once.
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?batch=5")), 2)
		// A later ack finds the message done.
		r := b.ackMsg(msgs(t, p)[0], "completed", true)
		eq(t, r, "success", true)
		eq(t, r, "leaseReleased", false)
	})
	t.Run("params_validated", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		bad := map[string]string{
			"batch=0":         "batch",
			"batch=-1":        "batch",
			"batch=abc":       "batch",
			"batch=10abc":     "batch",
			"batch=1.5":       "batch",
			"partitions=0":    "partitions",
			"partitions=65":   "partitions",
			"timeout=-1":      "timeout",
			"timeout=60001":   "timeout",
			"leaseSeconds=0":  "leaseSeconds",
			"leaseSeconds=-5": "leaseSeconds",
			"wait=yes":        "wait",
			"autoAck=TRUE":    "autoAck",
			"autopilot=2":     "autopilot",
			"conflation=on":   "conflation",
			"subscriptionMode=new-only&consumerGroup=g":    "subscriptionMode",
			"subscriptionMode=latest":                      "subscriptionMode",
			"subscriptionFrom=yesterday&consumerGroup=g":   "subscriptionFrom",
			"conflation=true":                              "",
			"conflation=true&consumerGroup=__QUEUE_MODE__": "",
			"conflation=true&consumerGroup=g&autoAck=true": "",
		}
		for q, word := range bad {
			t.Run(q, func(t *testing.T) {
				b := b.at(t)
				for _, path := range []string{"/api/v1/pop/queue/q?", "/api/v1/pop/queue/q/partition/p?", "/api/v1/pop?namespace=x&"} {
					if word == "" {
						b.get(path + q).fails(http.StatusBadRequest)
					} else {
						b.get(path+q).fails(http.StatusBadRequest, word)
					}
				}
			})
		}
		// Nothing was leased by the refused pops, and no group start decided.
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")), 0)
	})
	t.Run("first_value_empty_default_booleans", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 4)
		// A repeated parameter counts its first value; an empty one takes its default.
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?batch=2&batch=abc&leaseSeconds=&timeout=")), 0, 1)
		b.advance(61 * time.Second)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?batch=3&autoAck=1&wait=0")), 0, 1, 2)
		p := b.pop("/api/v1/pop/queue/q?batch=3&autoAck=false")
		if str(t, p, "leaseId") == "" {
			t.Fatal("autoAck=false leased nothing")
		}
	})
	t.Run("autoAck_on_stored_conflating_group", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&subscriptionMode=all")
		b.get("/api/v1/pop/queue/q?consumerGroup=g&autoAck=true").fails(http.StatusBadRequest)
	})
	t.Run("conflation", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		p := b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&subscriptionMode=all&batch=10")
		ms := msgs(t, p)
		wantOffsets(t, ms, 2)
		eq(t, b.ackMsg(ms[0], "completed", false), "leaseReleased", true)
		r := b.get("/api/v1/pop/queue/q?consumerGroup=g").wantStatus(http.StatusOK)
		if string(r.body) != `{"messages":[]}` {
			t.Fatalf("empty conflating pop: %s, want {\"messages\":[]}", r.body)
		}
		// The decision is stored: a pop without conflation=true still conflates.
		b.pushN("q", "p", 5) // transactionIds p-t0..2 are duplicates; p-t3, p-t4 are new
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=10")), 4)
	})
	t.Run("competing_workers", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 2)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 2)
		p1 := b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&batch=1")
		p2 := b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=1")
		if p1["partition"] == p2["partition"] {
			t.Fatalf("both workers got partition %v", p1["partition"])
		}
		b.get("/api/v1/pop/queue/q?consumerGroup=g&autoAck=true").empty()
		// Another group is not blocked.
		b.pop("/api/v1/pop/queue/q?consumerGroup=h&subscriptionMode=all")
	})
	t.Run("wait_without_timeout_effect", func(t *testing.T) {
		b := start(t)
		b.get("/api/v1/pop/queue/q?timeout=60000").empty()
		b.get("/api/v1/pop/queue/q?wait=true&timeout=0").empty()
		done := make(chan reply, 1)
		go func() { done <- b.get("/api/v1/pop/queue/q?wait=true&timeout=60000&batch=5") }()
		// Whether the push lands before or after the pop starts waiting, the pop gets it.
		b.pushN("q", "p", 1)
		wantOffsets(t, msgs(t, answered(t, done).obj(http.StatusOK)), 0)
	})
	t.Run("discovery", func(t *testing.T) {
		b := start(t)
		b.get("/api/v1/pop").fails(http.StatusBadRequest)
		b.post("/api/v1/configure", obj{"queue": "a", "namespace": "ns", "task": "t1", "options": obj{"leaseTime": 600}}).obj(http.StatusOK)
		b.post("/api/v1/configure", obj{"queue": "z", "namespace": "other"}).obj(http.StatusOK)
		b.pushN("a", "p", 2)
		b.pushN("z", "p", 2)
		p := b.pop("/api/v1/pop?namespace=ns&batch=5&wait=true&timeout=60000")
		eq(t, p, "queue", "a")
		b.get("/api/v1/pop?namespace=ns&task=t2").empty()
		// Lease is 60 s whatever the queue's leaseTime: after 60 s the messages are free.
		b.advance(60 * time.Second)
		ms := msgs(t, b.pop("/api/v1/pop?task=t1&batch=5"))
		if got := attempts(t, ms); len(got) != 2 || got[0] != 2 {
			t.Fatalf("deliveryAttempt %v after the discovery lease expired, want [2 2]", got)
		}
	})
}

// TestRacingPops: concurrent pops of one group for one ready partition: exactly one gets it,
// and every message goes to one worker.
func TestRacingPops(t *testing.T) {
	b := start(t)
	b.pushN("q", "a", 3)
	b.pushN("q", "b", 3)
	const workers = 16
	answers := make(chan reply, workers)
	for range workers {
		go func() { answers <- b.get("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&batch=10") }()
	}
	seen := map[string]bool{}
	got := 0
	for range workers {
		r := <-answers
		if r.status == http.StatusNoContent {
			continue
		}
		got++
		for _, m := range msgs(t, r.obj(http.StatusOK)) {
			id := m["id"].(string)
			if seen[id] {
				t.Fatalf("message %s handed to two workers", id)
			}
			seen[id] = true
		}
	}
	if got != 2 || len(seen) != 6 {
		t.Fatalf("%d pops leased %d messages, want 2 pops and 6 messages", got, len(seen))
	}
}
