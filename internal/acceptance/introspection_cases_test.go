package acceptance

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

// partitionOf is group g's entry in its detail for partition p of queue q.
func (b *broker) partitionOf(g, q, p string) obj {
	b.t.Helper()
	for _, e := range list(b.t, sub(b.t, b.get("/api/v1/consumer-groups/"+g+"?queue="+q).obj(http.StatusOK), q), "partitions") {
		if e["partition"] == p {
			return e
		}
	}
	b.t.Fatalf("group %s has no partition %s on %s", g, p, q)
	return nil
}

// partitionCounts is partition p's counts in queue q's detail.
func (b *broker) partitionCounts(q, p string) obj {
	b.t.Helper()
	for _, e := range list(b.t, b.get("/api/v1/status/queues/"+q).obj(http.StatusOK), "partitions") {
		if e["name"] == p {
			return e
		}
	}
	b.t.Fatalf("queue %s has no partition %s", q, p)
	return nil
}

func TestIntrospectionCases(t *testing.T) {
	t.Parallel()
	t.Run("conflating_group", func(t *testing.T) {
		b := start(t, queentest.WithManualClockAt(t0))
		b.pushN("q", "p", 3)
		p := b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&subscriptionMode=all")
		fields(t, b.partitionOf("g", "q", "p"), "cursor", 1, "processing", 1, "pending", 0, "offsetLag", 1, "lastConsumedAt", ts(0), "totalConsumed", 0, "leaseActive", true)
		b.advance(time.Second)
		b.ackMsg(msgs(t, p)[0], "completed", false)
		fields(t, b.partitionOf("g", "q", "p"), "cursor", 2, "offsetLag", 0, "totalConsumed", 1, "lastConsumedAt", ts(1))
		b.push(item("q", "p", "x", 1), item("q", "p", "y", 2))
		b.advance(5 * time.Second)
		b.push(item("q", "p", "z", 3))
		b.advance(10 * time.Second)
		fields(t, b.partitionOf("g", "q", "p"), "cursor", 2, "pending", 1, "processing", 0, "offsetLag", 1, "timeLagSeconds", 10)
		eq(t, b.get("/api/v1/consumer-groups?queue=q").arr(http.StatusOK)[0], "conflation", true)
		eq(t, b.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").arr(http.StatusOK)[0], "oldest_unconsumed_at", ts(6))
	})
	t.Run("failed_and_dead_letters", func(t *testing.T) {
		b := start(t, queentest.WithManualClockAt(t0))
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 1}}).obj(http.StatusOK)
		pid := b.pushN("q", "p", 2)[0]["partition_id"].(string)
		b.ackMsg(msgs(t, b.pop("/api/v1/pop/queue/q"))[0], "failed", false)
		pc := b.partitionCounts("q", "p")
		counts(t, sub(t, pc, "messages"), 2, 2, 0, 0, 1, 0)
		fields(t, b.partitionOf("__QUEUE_MODE__", "q", "p"), "retries", 1, "pending", 2, "cursor", -1)
		m := list(t, b.get("/api/v1/messages?queue=q&partition=p&order=asc").obj(http.StatusOK), "messages")
		eq(t, m[0], "status", "pending")
		b.advance(time.Second)
		b.ackMsg(msgs(t, b.pop("/api/v1/pop/queue/q"))[0], "dlq", false)
		pc = b.partitionCounts("q", "p")
		counts(t, sub(t, pc, "messages"), 2, 1, 0, 1, 0, 1)
		fields(t, b.partitionOf("__QUEUE_MODE__", "q", "p"), "retries", 0, "cursor", 0, "totalConsumed", 0, "lastConsumedAt", ts(1))
		d := b.get("/api/v1/messages/" + pid + "/p-t0").obj(http.StatusOK)
		fields(t, d, "status", "dead_letter", "queueStatus", "dead_letter", "errorMessage", "Retries exhausted", "retryCount", 1)
		fields(t, list(t, d, "consumerGroups")[0], "name", "__QUEUE_MODE__", "consumed", true, "status", "dead_letter", "deliveryAttempt", 2)
		dl := list(t, b.get("/api/v1/messages?queue=q&status=dead_letter").obj(http.StatusOK), "messages")
		if len(dl) != 1 || dl[0]["transactionId"] != "p-t0" {
			t.Fatalf("dead_letter filter: %v", dl)
		}
		// h's own view is its lease (a G-view is dead_letter only for the group that filed it),
		// while the entry still says dead_letter: a dead letter is stored.
		b.pop("/api/v1/pop/queue/q?consumerGroup=h&subscriptionMode=all&batch=2")
		d = b.get("/api/v1/messages/" + pid + "/p-t0").obj(http.StatusOK)
		fields(t, d, "status", "dead_letter", "queueStatus", "dead_letter")
		fields(t, list(t, d, "consumerGroups")[1], "name", "h", "status", "processing", "consumed", false, "deliveryAttempt", 1)
		// Replaying removes it from the counts.
		id := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]["id"].(string)
		b.post("/api/v1/dlq/"+id+"/replay", nil).obj(http.StatusOK)
		eq(t, sub(t, b.partitionCounts("q", "p"), "messages"), "deadLetter", 0)
		fields(t, b.get("/api/v1/messages/"+pid+"/p-t0").obj(http.StatusOK), "errorMessage", nil, "retryCount", nil)
	})
	t.Run("attachment", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		if r := b.get("/api/v1/consumer-groups").wantStatus(http.StatusOK); string(r.body) != "[]" {
			t.Fatalf("groups before any pop: %s", r.body)
		}
		// An unread queue shows every message pending (queue mode from offset 0).
		counts(t, sub(t, b.partitionCounts("q", "p"), "messages"), 1, 1, 0, 0, 0, 0)
		b.seek("__QUEUE_MODE__", "q", obj{"toEnd": true}).obj(http.StatusOK)
		gs := b.get("/api/v1/consumer-groups").arr(http.StatusOK)
		if len(gs) != 1 || gs[0]["name"] != "__QUEUE_MODE__" {
			t.Fatalf("after a queue-mode seek: %v", gs)
		}
		counts(t, sub(t, b.partitionCounts("q", "p"), "messages"), 1, 0, 0, 1, 0, 0)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")
		b.del("/api/v1/consumer-groups/g/queues/q").obj(http.StatusOK)
		b.get("/api/v1/consumer-groups/g").fails(http.StatusNotFound, "consumer group not found")
	})
	t.Run("positions_from_stored_starts", func(t *testing.T) {
		b := start(t, queentest.WithManualClockAt(t0))
		b.pushN("q", "a", 1)
		b.get("/api/v1/pop/queue/q?consumerGroup=n").empty() // new at t0
		b.advance(10 * time.Second)
		b.pushN("q", "a", 2) // a-t1 at t0+10
		b.pushN("q", "b", 1) // a partition created after the start
		fields(t, b.partitionOf("n", "q", "a"), "cursor", 0, "offsetLag", 1, "pending", 1, "timeLagSeconds", 0, "lastConsumedAt", nil)
		fields(t, b.partitionOf("n", "q", "b"), "cursor", -1, "offsetLag", 1)
		b.get("/api/v1/pop/queue/q/partition/b?consumerGroup=ts&subscriptionFrom=" + url.QueryEscape(ts(5))).obj(http.StatusOK)
		fields(t, b.partitionOf("ts", "q", "a"), "cursor", 0, "offsetLag", 1)
		gs := b.get("/api/v1/consumer-groups?queue=q").arr(http.StatusOK)
		fields(t, gs[0], "name", "n", "subscriptionMode", "new", "subscriptionTimestamp", ts(0), "totalLag", 2, "members", 0)
		fields(t, gs[1], "name", "ts", "subscriptionMode", "timestamp", "subscriptionTimestamp", ts(5), "subscriptionCreatedAt", ts(10), "members", 1)
	})
	t.Run("no_omitted_keys_on_empty_queue", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q"}).obj(http.StatusOK)
		o := b.get("/api/v1/messages?queue=q").obj(http.StatusOK)
		hasKeys(t, o, "messages", "mode")
		if len(list(t, o, "messages")) != 0 {
			t.Fatalf("messages in an empty queue: %v", o)
		}
		fields(t, sub(t, o, "mode"), "hasQueueMode", false, "busGroupsCount", 0, "type", "none")
		ov := b.get("/api/v1/resources/overview").obj(http.StatusOK)
		fields(t, sub(t, sub(t, ov, "lag"), "offset"), "min", 0, "max", 0, "avg", 0, "median", 0)
		fields(t, ov, "queues", 1, "partitions", 1, "namespaces", 0, "tasks", 0)
	})
}
