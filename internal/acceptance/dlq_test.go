package acceptance

import (
	"net/http"
	"testing"
	"time"
)

var deadLetterKeys = []string{"id", "messageId", "transactionId", "partitionId", "queue", "partition", "consumerGroup", "errorMessage", "retryCount", "data", "producerSub", "createdAt", "failedAt"}

// failUntilDead fails the one message of q/p for group g until it is filed, and returns its
// deliveries.
func (b *broker) failUntilDead(q, p, g string, errText string) int {
	b.t.Helper()
	for n := 1; n < 20; n++ {
		ms := msgs(b.t, b.pop("/api/v1/pop/queue/"+q+"/partition/"+p+"?consumerGroup="+g+"&subscriptionMode=all"))
		eq(b.t, ms[0], "deliveryAttempt", n)
		body := obj{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "leaseId": ms[0]["leaseId"], "consumerGroup": g, "status": "failed"}
		if errText != "" {
			body["error"] = errText
		}
		if r := b.ack(body); r["dlq"] == true {
			eq(b.t, r, "leaseReleased", true)
			return n
		}
	}
	b.t.Fatal("never filed")
	return 0
}

func TestDeadLetters(t *testing.T) {
	t.Parallel()
	t.Run("budget_and_record", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 2}}).obj(http.StatusOK)
		pushed := b.push(item("q", "p", "m", obj{"k": "v"}))[0]
		if n := b.failUntilDead("q", "p", "g", ""); n != 3 {
			t.Fatalf("delivered %d times, want retryLimit+1 = 3", n)
		}
		d := b.get("/api/v1/dlq?queue=q").obj(http.StatusOK)
		hasKeys(t, d, "messages", "pagination", "total")
		eq(t, d, "total", 1)
		pg := sub(t, d, "pagination")
		hasKeys(t, pg, "limit", "offset")
		eq(t, pg, "limit", 100)
		eq(t, pg, "offset", 0)
		dl := list(t, d, "messages")[0]
		hasKeys(t, dl, deadLetterKeys...)
		eq(t, dl, "messageId", pushed["message_id"])
		eq(t, dl, "transactionId", "m")
		eq(t, dl, "partitionId", pushed["partition_id"])
		eq(t, dl, "queue", "q")
		eq(t, dl, "partition", "p")
		eq(t, dl, "consumerGroup", "g")
		eq(t, dl, "errorMessage", "Retries exhausted")
		eq(t, dl, "retryCount", 2)
		eq(t, dl, "producerSub", nil)
		eq(t, sub(t, dl, "data"), "k", "v")
		isTime(t, dl, "createdAt")
		isTime(t, dl, "failedAt")
		if dl["id"] == dl["messageId"] {
			t.Fatal("dead-letter id equals the message id")
		}
		// Another group reads the message normally.
		eq(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=h&subscriptionMode=all"))[0], "deliveryAttempt", 1)
	})
	t.Run("counter_resets_for_next_message", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 1}}).obj(http.StatusOK)
		b.pushN("q", "p", 2)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?batch=1"))
		b.ackMsg(ms[0], "failed", false)
		ms = msgs(t, b.pop("/api/v1/pop/queue/q?batch=1"))
		b.ackMsg(ms[0], "completed", false) // cursor passes the message that spent the counter
		ms = msgs(t, b.pop("/api/v1/pop/queue/q?batch=1"))
		eq(t, ms[0], "offset", 1)
		eq(t, b.ackMsg(ms[0], "failed", false), "dlq", false) // full budget again
	})
	t.Run("no_dlq_drops", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0, "deadLetterQueue": false}}).obj(http.StatusOK)
		_, ms := b.leased("q", "p", "", 2)
		r := b.ackMsg(ms[0], "failed", false)
		eq(t, r, "success", true)
		eq(t, r, "dlq", false)
		eq(t, b.ackMsg(ms[1], "dlq", false), "dlq", false)
		eq(t, b.get("/api/v1/dlq").obj(http.StatusOK), "total", 0)
		b.get("/api/v1/pop/queue/q").empty()
	})
	t.Run("refile_keeps_id", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 1)
		b.failUntilDead("q", "p", "g", "first")
		first := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]
		b.post("/api/v1/consumer-groups/g/queues/q/seek", obj{"timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		b.advance(time.Second)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g"))
		b.ack(obj{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "consumerGroup": "g", "status": "dlq", "error": "second"})
		d := b.get("/api/v1/dlq").obj(http.StatusOK)
		eq(t, d, "total", 1)
		again := list(t, d, "messages")[0]
		eq(t, again, "id", first["id"])
		eq(t, again, "errorMessage", "second")
		if again["failedAt"] == first["failedAt"] {
			t.Fatal("failedAt not updated")
		}
	})
	t.Run("filters_order_paging_validation", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		for _, p := range []string{"a", "b", "c"} {
			b.pushN("q", p, 1)
			b.failUntilDead("q", p, "g", "")
			b.advance(time.Second)
		}
		d := b.get("/api/v1/dlq?limit=2&offset=1").obj(http.StatusOK)
		eq(t, d, "total", 3)
		got := list(t, d, "messages")
		if len(got) != 2 || got[0]["partition"] != "b" || got[1]["partition"] != "a" {
			t.Fatalf("page %v, want b then a (failedAt descending)", got)
		}
		eq(t, b.get("/api/v1/dlq?partition=c&consumerGroup=g&queue=q").obj(http.StatusOK), "total", 1)
		eq(t, b.get("/api/v1/dlq?consumerGroup=other").obj(http.StatusOK), "total", 0)
		eq(t, b.get("/api/v1/dlq?queue=unknown").obj(http.StatusOK), "total", 0)
		fa := list(t, b.get("/api/v1/dlq?partition=b").obj(http.StatusOK), "messages")[0]["failedAt"].(string)
		eq(t, b.get("/api/v1/dlq?from="+fa+"&to="+fa).obj(http.StatusOK), "total", 1)
		for _, q := range []string{"limit=0", "limit=-1", "limit=x", "offset=-1", "offset=1.5", "from=yesterday", "to=2026-13-01T00:00:00Z"} {
			t.Run(q, func(t *testing.T) { b.at(t).get("/api/v1/dlq?" + q).fails(http.StatusBadRequest) })
		}
	})
	t.Run("replay", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.push(obj{"queue": "q", "partition": "p", "transactionId": "m", "payload": obj{"k": 1}, "traceId": "9f1c3c4e-6b7a-4c1d-9e2f-0a1b2c3d4e5f"})
		b.pushN("q", "p", 1)
		b.failUntilDead("q", "p", "g", "")
		dl := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]
		id := dl["id"].(string)
		r := b.post("/api/v1/dlq/"+id+"/replay", nil).obj(http.StatusOK)
		hasKeys(t, r, "replayed", "id", "transactionId", "partitionId", "offset")
		eq(t, r, "replayed", true)
		eq(t, r, "id", id)
		eq(t, r, "transactionId", "dlq:"+id)
		eq(t, r, "partitionId", dl["partitionId"])
		eq(t, r, "offset", 2)
		eq(t, b.get("/api/v1/dlq").obj(http.StatusOK), "total", 0)
		b.post("/api/v1/dlq/"+id+"/replay", nil).fails(http.StatusNotFound, "dead letter not found")
		b.post("/api/v1/dlq/nope/replay", nil).fails(http.StatusNotFound, "dead letter not found")
		// Every group reads the copy from attempt 1, with the original data and traceId.
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=other&subscriptionMode=all&batch=10"))
		wantOffsets(t, ms, 0, 1, 2)
		eq(t, ms[2], "transactionId", "dlq:"+id)
		eq(t, ms[2], "deliveryAttempt", 1)
		eq(t, ms[2], "traceId", "9f1c3c4e-6b7a-4c1d-9e2f-0a1b2c3d4e5f")
		eq(t, sub(t, ms[2], "data"), "k", 1)
	})
	t.Run("delete", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 1)
		b.failUntilDead("q", "p", "g", "")
		id := list(t, b.get("/api/v1/dlq").obj(http.StatusOK), "messages")[0]["id"].(string)
		r := b.del("/api/v1/dlq/" + id).obj(http.StatusOK)
		hasKeys(t, r, "deleted", "id")
		eq(t, r, "deleted", true)
		eq(t, r, "id", id)
		b.del("/api/v1/dlq/"+id).fails(http.StatusNotFound, "dead letter not found")
		b.post("/api/v1/dlq/"+id+"/replay", nil).fails(http.StatusNotFound, "dead letter not found")
		b.get("/api/v1/pop/queue/q?consumerGroup=x&subscriptionMode=all&batch=5").obj(http.StatusOK) // only the original
	})
}
