package acceptance

import (
	"net/http"
	"testing"
)

func (b *broker) txn(ops ...obj) obj {
	b.t.Helper()
	return b.post("/api/v1/transaction", obj{"operations": ops}).obj(http.StatusOK)
}

func TestTransactions(t *testing.T) {
	t.Parallel()
	t.Run("commit_shape", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 1)
		r := b.txn(
			obj{"type": "ack", "transactionId": ms[0]["transactionId"], "partitionId": ms[0]["partitionId"], "leaseId": ms[0]["leaseId"], "consumerGroup": "g"},
			obj{"type": "push", "items": []obj{item("out", "x", "o1", 1), item("out", "x", "o1", 2)}},
		)
		hasKeys(t, r, "transactionId", "success", "results")
		eq(t, r, "success", true)
		res := list(t, r, "results")
		if len(res) != 3 {
			t.Fatalf("%d results, want 3", len(res))
		}
		hasKeys(t, res[0], "index", "type", "success", "transactionId", "partitionId", "error", "dlq", "leaseReleased")
		eq(t, res[0], "type", "ack")
		eq(t, res[0], "leaseReleased", true)
		eq(t, res[0], "error", nil)
		for i, e := range res[1:] {
			hasKeys(t, e, "index", "type", "success", "status", "transactionId", "messageId", "partitionId", "queueName", "offset")
			eq(t, e, "index", i+1)
			eq(t, e, "type", "push")
			eq(t, e, "queueName", "out")
			eq(t, e, "offset", 0)
		}
		eq(t, res[1], "status", "queued")
		eq(t, res[2], "status", "duplicate") // A duplicate does not fail it
		eq(t, res[2], "success", true)
	})
	t.Run("rollback_changes_nothing", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "g", 2)
		r := b.txn(
			obj{"type": "push", "items": []obj{item("newq", "", "a", 1)}},
			obj{"type": "ack", "transactionId": ms[1]["transactionId"], "partitionId": ms[1]["partitionId"], "consumerGroup": "g"},
			obj{"type": "ack", "transactionId": "ghost", "partitionId": ms[0]["partitionId"], "consumerGroup": "g"},
		)
		hasKeys(t, r, "transactionId", "success", "error", "results")
		eq(t, r, "success", false)
		eq(t, r, "error", "operation 2: Message not found")
		if len(list(t, r, "results")) != 0 {
			t.Fatal("rollback results not empty")
		}
		b.get("/api/v1/status/queues/newq").fails(http.StatusNotFound)
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty() // lease still held
		eq(t, b.ackMsg(ms[0], "completed", false), "success", true)
	})
	t.Run("bad_type_and_bad_push", func(t *testing.T) {
		b := start(t)
		r := b.txn(obj{"type": "push", "items": []obj{item("q", "", "a", 1)}}, obj{"type": "nope"})
		eq(t, r, "success", false)
		if s := str(t, r, "error"); len(s) < 12 || s[:12] != "operation 1:" {
			t.Fatalf("error %q", s)
		}
		r = b.txn(obj{"type": "push", "items": []obj{{"queue": "q", "traceId": "x"}}})
		eq(t, r, "success", false)
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound)
	})
	t.Run("failed_spends_budget_retry_supported", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 1}}).obj(http.StatusOK)
		_, ms := b.leased("q", "p", "", 1)
		ack := func(m obj, st string) obj {
			return obj{"type": "ack", "transactionId": m["transactionId"], "partitionId": m["partitionId"], "status": st}
		}
		eq(t, list(t, b.txn(ack(ms[0], "retry")), "results")[0], "dlq", false)
		ms = msgs(t, b.pop("/api/v1/pop/queue/q"))
		eq(t, list(t, b.txn(ack(ms[0], "failed")), "results")[0], "dlq", false)
		ms = msgs(t, b.pop("/api/v1/pop/queue/q"))
		eq(t, ms[0], "deliveryAttempt", 3)
		eq(t, list(t, b.txn(ack(ms[0], "failed")), "results")[0], "dlq", true)
	})
	t.Run("operations_errors", func(t *testing.T) {
		b := start(t)
		for body, want := range map[string]string{
			`{}`:                          "operations array required",
			`{"operations":{}}`:           "operations array required",
			`{"operations":[]}`:           "operations array cannot be empty",
			`{"operations":[1]}`:          "",
			`{"operations":[{"type":1}]}`: "",
			`[]`:                          "",
			``:                            "Empty request body",
		} {
			t.Run(body, func(t *testing.T) {
				msg := b.at(t).post("/api/v1/transaction", body).fails(http.StatusBadRequest)
				if want != "" && msg != want {
					t.Errorf("error %q, want %q", msg, want)
				}
			})
		}
	})
}
