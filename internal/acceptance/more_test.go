package acceptance

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestMoreRules(t *testing.T) {
	t.Parallel()
	t.Run("redelivery_hands_newest", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&subscriptionMode=all"))
		wantOffsets(t, ms, 2)
		b.ackMsg(ms[0], "retry", false)
		b.push(item("q", "p", "new", 1))
		ms = msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5"))
		wantOffsets(t, ms, 3)
		eq(t, ms[0], "deliveryAttempt", 1)
	})
	t.Run("batch_caps_conflating_partitions", func(t *testing.T) {
		b := start(t)
		for _, p := range []string{"a", "b", "c"} {
			b.pushN("q", p, 2)
			b.advance(time.Millisecond)
		}
		p := b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&subscriptionMode=all&batch=2&partitions=3")
		ms := msgs(t, p)
		wantOffsets(t, ms, 1, 1)
		eq(t, p, "partitionsClaimed", 2)
	})
	t.Run("conflation_choice_is_stored_false", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&autoAck=true")
		b.pushN("q", "p", 3)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&conflation=true&batch=5")), 1, 2)
	})
	t.Run("seek_gives_start_to_unknown_group", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		b.seek("g", "q", obj{"timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=new&batch=5")), 0, 1)
	})
	t.Run("keep_metadata_keeps_start", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&autoAck=true&batch=5")
		eq(t, b.del("/api/v1/consumer-groups/g/queues/q?deleteMetadata=false").obj(http.StatusOK), "deletedPartitions", 1)
		// The cursor is gone and the stored all start stays, so the later new changes nothing.
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=new&batch=5")), 0, 1)
	})
	t.Run("rollback_keeps_counters_and_dead_letters", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		_, ms := b.leased("q", "p", "", 1)
		m := ms[0]
		r := b.txn(obj{"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"], "status": "failed"}, obj{"type": "push", "items": []obj{{"queue": ""}}})
		eq(t, r, "success", false)
		if !strings.HasPrefix(str(t, r, "error"), "operation 1: ") {
			t.Fatalf("error %q", r["error"])
		}
		eq(t, b.get("/api/v1/dlq").obj(http.StatusOK), "total", 0)
		b.get("/api/v1/pop/queue/q").empty() // the lease survived
		eq(t, b.ackMsg(m, "failed", false), "dlq", true)
	})
	t.Run("transaction_fenced_ack", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 1)
		r := b.txn(obj{"type": "ack", "transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "leaseId": "stale"})
		eq(t, r, "error", "operation 0: Invalid or expired lease")
	})
	t.Run("commit_wakes_waiter", func(t *testing.T) {
		b := start(t)
		done := b.background("/api/v1/pop/queue/q?wait=true&timeout=60000")
		eq(t, b.txn(obj{"type": "push", "items": []obj{item("q", "p", "a", 1)}}), "success", true)
		wantOffsets(t, msgs(t, answered(t, done).obj(http.StatusOK)), 0)
	})
	t.Run("pop_lease_cap", func(t *testing.T) {
		b := start(t)
		items := make([]obj, 10000)
		for i := range items {
			items[i] = obj{"queue": "q", "partition": "p"}
		}
		b.push(items...)
		b.push(obj{"queue": "q", "partition": "p"})
		if n := len(msgs(t, b.pop("/api/v1/pop/queue/q?batch=20000"))); n != 10000 {
			t.Fatalf("%d messages, want 10000", n)
		}
	})
	t.Run("empty_timestamp", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.seek("g", "q", obj{"timestamp": ""}).fails(http.StatusBadRequest)
	})
}

func TestOrderAndConfigure(t *testing.T) {
	t.Parallel()
	t.Run("oldest_available_message_first", func(t *testing.T) {
		b := start(t)
		b.push(item("q", "a", "a1", 1))
		b.advance(time.Second)
		b.push(item("q", "b", "b1", 1))
		b.advance(time.Second)
		b.push(item("q", "a", "a2", 1))
		for _, want := range []string{"a", "b", "a"} {
			p := b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")
			eq(t, p, "partition", want)
			b.ackMsg(msgs(t, p)[0], "completed", false)
		}
	})
	t.Run("new_leaseTime_applies_to_later_leases", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 1)
		b.pushN("q", "b", 1)
		b.pop("/api/v1/pop/queue/q/partition/a")
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"leaseTime": 600}}).obj(http.StatusOK)
		b.pop("/api/v1/pop/queue/q/partition/b")
		b.advance(60 * time.Second)
		eq(t, b.pop("/api/v1/pop/queue/q"), "partition", "a")
		b.get("/api/v1/pop/queue/q/partition/b").empty()
	})
	t.Run("single_method_paths", func(t *testing.T) {
		b := start(t)
		for _, c := range [][2]string{
			{"GET", "/api/v1/dlq/x"}, {"GET", "/api/v1/consumer-groups/g/queues/q"},
			{"GET", "/api/v1/consumer-groups/g/queues/q/seek"}, {"DELETE", "/api/v1/dlq/x/replay"},
			{"PUT", "/api/v1/push"}, {"PATCH", "/api/v1/configure"},
		} {
			b.at(t).do(c[0], c[1], nil).fails(http.StatusMethodNotAllowed, "method not allowed")
		}
		for _, p := range []string{"/api/v1/pop/queue/q/partition", "/api/v1/messages/onlyone", "/api/v1/pop/queue", "/api/v1"} {
			b.at(t).get(p).fails(http.StatusNotFound, "not found")
		}
	})
}

func TestAfterExpiryAndDeletion(t *testing.T) {
	t.Parallel()
	t.Run("unfenced_ack_after_expiry", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 2)
		b.advance(61 * time.Second)
		b.pushN("q", "p", 3)
		eq(t, b.ack(obj{"transactionId": "p-t2", "partitionId": ms[0]["partitionId"], "consumerGroup": "g"}), "error", "message not delivered to this group")
		eq(t, b.ackMsg(ms[1], "completed", true), "success", true)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5")), 2)
	})
	t.Run("waiters_keep_waiting", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q")
		done := b.background("/api/v1/pop/queue/q?wait=true&timeout=60000")
		b.del("/api/v1/resources/queues/q").obj(http.StatusOK)
		b.push(item("q", "p", "again", 1))
		ms := msgs(t, answered(t, done).obj(http.StatusOK))
		eq(t, ms[0], "transactionId", "again")
		eq(t, ms[0], "offset", 0)
	})
}
