package acceptance

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

var ackKeys = []string{"index", "transactionId", "success", "error", "queueName", "partitionName", "leaseReleased", "dlq"}

// leased pushes n messages to q/p and pops them all for group g (queue mode when g is "").
func (b *broker) leased(q, p, g string, n int) (obj, []obj) {
	b.t.Helper()
	b.pushN(q, p, n)
	path := "/api/v1/pop/queue/" + q + "/partition/" + p + "?batch=" + strconv.Itoa(n)
	if g != "" {
		path += "&consumerGroup=" + g + "&subscriptionMode=all"
	}
	pop := b.pop(path)
	return pop, msgs(b.t, pop)
}

func TestAck(t *testing.T) {
	t.Parallel()
	t.Run("shape_default_completed", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("orders", "4", "", 1)
		r := b.ack(obj{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"]})
		hasKeys(t, r, ackKeys...)
		eq(t, r, "index", 0)
		eq(t, r, "transactionId", ms[0]["transactionId"])
		eq(t, r, "success", true)
		eq(t, r, "error", nil)
		eq(t, r, "queueName", "orders")
		eq(t, r, "partitionName", "4")
		eq(t, r, "leaseReleased", true)
		eq(t, r, "dlq", false)
		b.get("/api/v1/pop/queue/orders").empty()
	})
	t.Run("last_message_releases", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 3)
		r := b.ackMsg(ms[1], "completed", false)
		eq(t, r, "leaseReleased", false)
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
		eq(t, b.ackMsg(ms[2], "success", false), "leaseReleased", true) // success is an alias of completed
		b.pushN("q", "p", 4)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=9")), 3)
	})
	t.Run("at_or_below_cursor_is_success_no_change", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 3)
		b.ackMsg(ms[1], "completed", false)
		r := b.ackMsg(ms[0], "failed", false)
		eq(t, r, "success", true)
		eq(t, r, "error", nil)
		eq(t, r, "leaseReleased", false)
		// Still leased: the failed on a done message ended nothing.
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
	})
	t.Run("failed_redelivers_from_cursor", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 3)
		b.ackMsg(ms[0], "completed", false)
		r := b.ackMsg(ms[1], "failed", false)
		eq(t, r, "success", true)
		eq(t, r, "leaseReleased", true)
		eq(t, r, "dlq", false)
		again := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=9"))
		wantOffsets(t, again, 1, 2)
		if got := attempts(t, again); got[0] != 2 || got[1] != 2 {
			t.Fatalf("deliveryAttempt %v, want [2 2]", got)
		}
	})
	t.Run("retry_spends_nothing", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		_, ms := b.leased("q", "p", "g", 1)
		for i := range 3 {
			eq(t, b.ackMsg(ms[0], "retry", false), "leaseReleased", true)
			ms = msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g"))
			eq(t, ms[0], "deliveryAttempt", i+2)
		}
		r := b.ackMsg(ms[0], "failed", false)
		eq(t, r, "dlq", true) // retryLimit 0: the first failed files it
	})
	t.Run("dlq_at_once", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 2)
		r := b.ackMsg(ms[0], "dlq", false)
		eq(t, r, "dlq", true)
		eq(t, r, "leaseReleased", false)
		eq(t, b.ackMsg(ms[1], "completed", false), "leaseReleased", true)
		dl := list(t, b.get("/api/v1/dlq?queue=q").obj(http.StatusOK), "messages")
		if len(dl) != 1 {
			t.Fatalf("%d dead letters, want 1", len(dl))
		}
		eq(t, dl[0], "retryCount", 0)
	})
	t.Run("check_order_and_texts", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 3)
		pid, lease := ms[0]["partitionId"], ms[0]["leaseId"]
		refuse := func(t *testing.T, body obj, want string) {
			t.Helper()
			r := b.at(t).ack(body)
			hasKeys(t, r, ackKeys...)
			eq(t, r, "success", false)
			eq(t, r, "error", want)
			eq(t, r, "leaseReleased", false)
			eq(t, r, "dlq", false)
		}
		t.Run("missing transactionId", func(t *testing.T) {
			refuse(t, obj{"partitionId": pid, "status": "bogus"}, "transactionId is required")
		})
		t.Run("missing partitionId", func(t *testing.T) {
			refuse(t, obj{"transactionId": "x", "partitionId": "", "status": "bogus"}, "partitionId is required")
		})
		t.Run("invalid status before not found", func(t *testing.T) {
			refuse(t, obj{"transactionId": "nope", "partitionId": pid, "status": "bogus"}, "Invalid status")
		})
		t.Run("not found before lease", func(t *testing.T) {
			refuse(t, obj{"transactionId": "nope", "partitionId": pid, "leaseId": "wrong", "consumerGroup": "g"}, "Message not found")
			refuse(t, obj{"transactionId": ms[0]["transactionId"], "partitionId": "00000000-0000-0000-0000-000000000000"}, "Message not found")
		})
		t.Run("wrong lease", func(t *testing.T) {
			refuse(t, obj{"transactionId": ms[0]["transactionId"], "partitionId": pid, "leaseId": "wrong", "consumerGroup": "g"}, "Invalid or expired lease")
			// Another group's lease is not this group's.
			refuse(t, obj{"transactionId": ms[0]["transactionId"], "partitionId": pid, "leaseId": lease, "consumerGroup": "h"}, "Invalid or expired lease")
		})
		t.Run("not delivered", func(t *testing.T) {
			refuse(t, obj{"transactionId": ms[0]["transactionId"], "partitionId": pid, "consumerGroup": "never"}, "message not delivered to this group")
		})
		t.Run("queue and partition named when refused", func(t *testing.T) {
			r := b.at(t).ack(obj{"transactionId": "nope", "partitionId": pid})
			eq(t, r, "queueName", "q")
			eq(t, r, "partitionName", "p")
			r = b.at(t).ack(obj{"transactionId": "nope", "partitionId": "zzz"})
			eq(t, r, "queueName", nil)
			eq(t, r, "partitionName", nil)
		})
	})
	t.Run("outside_leased_batch", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 3)
		p := b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all&batch=2")
		ms := msgs(t, p)
		body := obj{"transactionId": "p-t2", "partitionId": ms[0]["partitionId"], "consumerGroup": "g"}
		eq(t, b.ack(body), "error", "message not in leased batch")
		body["leaseId"] = p["leaseId"]
		eq(t, b.ack(body), "error", "message not in leased batch")
	})
	t.Run("request_level_faults", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 1)
		for name, body := range map[string]string{
			"empty":            ``,
			"not json":         `{`,
			"array":            `[]`,
			"null":             `null`,
			"string":           `"x"`,
			"neither field":    `{}`,
			"status type":      `{"transactionId":"p-t0","partitionId":"x","status":1}`,
			"leaseId type":     `{"transactionId":"p-t0","partitionId":"x","leaseId":5}`,
			"transaction type": `{"transactionId":5,"partitionId":"x"}`,
		} {
			t.Run(name, func(t *testing.T) { b.at(t).post("/api/v1/ack", body).fails(http.StatusBadRequest) })
		}
		if msg := b.post("/api/v1/ack", ``).fails(http.StatusBadRequest); msg != "Empty request body" {
			t.Errorf("empty body: %q, want \"Empty request body\"", msg)
		}
		b.get("/api/v1/pop/queue/q").empty() // nothing was applied: still leased
		eq(t, b.ackMsg(ms[0], "completed", false), "leaseReleased", true)
	})
	t.Run("repeat_after_lease_ended", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 1)
		eq(t, b.ackMsg(ms[0], "completed", false), "success", true)
		r := b.ackMsg(ms[0], "completed", false)
		eq(t, r, "success", false)
		eq(t, r, "error", "Invalid or expired lease")
		eq(t, b.ackMsg(ms[0], "completed", true), "success", true) // unfenced: at or below the cursor
	})
	t.Run("unfenced_ack_completes_new_holder", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 2)
		b.advance(61 * time.Second)
		again := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5"))
		eq(t, b.ackMsg(ms[1], "completed", true), "leaseReleased", true) // the old worker, no leaseId
		r := b.ackMsg(again[0], "completed", false)
		eq(t, r, "success", false)
		eq(t, r, "error", "Invalid or expired lease")
	})
}

func TestAckBatch(t *testing.T) {
	t.Parallel()
	t.Run("empty", func(t *testing.T) {
		b := start(t)
		r := b.post("/api/v1/ack/batch", `{"acknowledgments":[]}`).wantStatus(http.StatusOK)
		if string(r.body) != "[]" {
			t.Fatalf("body %s, want []", r.body)
		}
	})
	t.Run("top_level_group_wins", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 1)
		res := b.post("/api/v1/ack/batch", obj{"consumerGroup": "g", "acknowledgments": []obj{{"transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "consumerGroup": "other"}}}).arr(http.StatusOK)
		eq(t, res[0], "leaseReleased", true)
		_, ms2 := b.leased("q2", "p", "h", 1)
		res = b.post("/api/v1/ack/batch", obj{"acknowledgments": []obj{{"transactionId": ms2[0]["transactionId"], "partitionId": ms2[0]["partitionId"], "consumerGroup": "h"}}}).arr(http.StatusOK)
		eq(t, res[0], "leaseReleased", true)
	})
	t.Run("offset_order_and_stop", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 5)
		ack := func(m obj, st string) obj {
			return obj{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": st}
		}
		res := b.post("/api/v1/ack/batch", obj{"consumerGroup": "g", "acknowledgments": []obj{
			ack(ms[4], "completed"), ack(ms[2], "failed"), ack(ms[0], "completed"), ack(ms[1], "completed"), ack(ms[3], "failed"),
		}}).arr(http.StatusOK)
		if len(res) != 5 {
			t.Fatalf("%d results", len(res))
		}
		for i, r := range res {
			hasKeys(t, r, ackKeys...)
			eq(t, r, "index", i)
			eq(t, r, "success", true)
		}
		eq(t, res[0], "transactionId", "p-t4")
		eq(t, res[1], "leaseReleased", true) // the stop ends the lease
		eq(t, res[0], "leaseReleased", false)
		again := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=9"))
		wantOffsets(t, again, 2, 3, 4)
		// One request spends at most one retry: two more failed deliveries stay within retryLimit 3.
		d := b.get("/api/v1/consumer-groups/g?queue=q").obj(http.StatusOK)
		eq(t, list(t, sub(t, d, "q"), "partitions")[0], "retries", 1)
	})
	t.Run("refused_item_stops_nothing", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 2)
		res := b.post("/api/v1/ack/batch", obj{"acknowledgments": []obj{
			{"transactionId": "ghost", "partitionId": "not-a-uuid"},
			{"transactionId": ms[1]["transactionId"], "partitionId": ms[1]["partitionId"], "leaseId": ms[1]["leaseId"]},
			{"transactionId": ms[0]["transactionId"]},
		}}).arr(http.StatusOK)
		eq(t, res[0], "error", "Message not found")
		eq(t, res[1], "success", true)
		eq(t, res[1], "leaseReleased", true)
		eq(t, res[2], "error", "partitionId is required")
	})
	t.Run("malformed", func(t *testing.T) {
		b := start(t)
		for name, body := range map[string]string{
			"not object": `[]`,
			"absent":     `{}`,
			"not array":  `{"acknowledgments":{}}`,
			"element":    `{"acknowledgments":[1]}`,
			"field type": `{"acknowledgments":[{"transactionId":1,"partitionId":"x"}]}`,
			"group type": `{"acknowledgments":[],"consumerGroup":3}`,
			"empty body": ``,
		} {
			t.Run(name, func(t *testing.T) { b.at(t).post("/api/v1/ack/batch", body).fails(http.StatusBadRequest) })
		}
		if msg := b.post("/api/v1/ack/batch", `{}`).fails(http.StatusBadRequest); msg != "acknowledgments array is required" {
			t.Errorf("error %q", msg)
		}
	})
	t.Run("multi_partition_shared_lease", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 1)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 1)
		p := b.pop("/api/v1/pop/queue/q?batch=5&partitions=2")
		ms := msgs(t, p)
		acks := []obj{}
		for _, m := range ms {
			acks = append(acks, obj{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": p["leaseId"]})
		}
		res := b.post("/api/v1/ack/batch", obj{"acknowledgments": acks}).arr(http.StatusOK)
		for _, r := range res {
			eq(t, r, "success", true)
			eq(t, r, "leaseReleased", true)
		}
	})
}

// TestAckBatchSpentBudget: with no budget, each failed files its message and moves the cursor;
// the last one ends the lease.
func TestAckBatchSpentBudget(t *testing.T) {
	b := start(t)
	b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
	_, ms := b.leased("q", "p", "g", 3)
	a := func(m obj, st string) obj {
		return obj{"transactionId": m["transactionId"], "partitionId": m["partitionId"], "leaseId": m["leaseId"], "status": st}
	}
	res := b.post("/api/v1/ack/batch", obj{"consumerGroup": "g", "acknowledgments": []obj{a(ms[2], "failed"), a(ms[1], "failed")}}).arr(http.StatusOK)
	fields(t, res[0], "success", true, "dlq", true, "leaseReleased", true)
	fields(t, res[1], "success", true, "dlq", true, "leaseReleased", false)
	eq(t, b.get("/api/v1/dlq?consumerGroup=g").obj(http.StatusOK), "total", 2)
	b.pushN("q", "p", 4)
	wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5")), 3)
}
