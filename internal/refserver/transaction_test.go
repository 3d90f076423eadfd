package refserver

import (
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// When several operations would fail, the rollback names the first in request order,
// whether it is a refused ack or an invalid push item; nothing is stored either way.
func TestARollbackNamesTheFirstFailingOperation(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	cases := []struct{ body, want string }{
		{`{"operations":[{"type":"ack","transactionId":"t","partitionId":"p"},{"type":"push","items":[{"queue":5}]}]}`,
			"operation 0: Message not found"},
		{`{"operations":[{"type":"bogus"},{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":[{"queue":5}]}]}`,
			`operation 0: `},
		{`{"operations":[{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":[{"queue":5}]},{"type":"bogus"}]}`,
			"operation 1: Queue must be a string"},
		{`{"operations":[{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":"x"}]}`,
			"operation 1: items array is required"},
	}
	for _, tc := range cases {
		var out map[string]any
		c.Post("/api/v1/transaction", tc.body).Want(t, http.StatusOK, &out)
		testutil.WantKeys(t, "rollback", out, "transactionId", "success", "error", "results")
		msg, _ := out["error"].(string)
		if out["success"] != false || len(msg) < len(tc.want) || msg[:len(tc.want)] != tc.want {
			t.Errorf("%s\n  answered %v, want an error starting %q", tc.body, out, tc.want)
		}
		if res, ok := out["results"].([]any); !ok || len(res) != 0 {
			t.Errorf("rollback results %v, want []", out["results"])
		}
	}
	// No queue was created by the rolled-back pushes.
	c.Delete("/api/v1/resources/queues/txq").WantError(t, http.StatusNotFound, "queue not found")
}

// A transaction's push wakes a waiting pop once committed.
func TestATransactionPushWakesAWaitingPop(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/txw", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	var res map[string]any
	c.Post("/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"txw","transactionId":"tw"}]}]}`).Want(t, http.StatusOK, &res)
	if res["success"] != true {
		t.Fatalf("transaction %v", res)
	}
	if p := testutil.Recv(t, got, "the committed push to wake the waiting pop"); p == nil || p.Messages[0].TransactionID != "tw" {
		t.Fatalf("woken pop %+v", p)
	}
}

// The transaction answer's keys, and a rollback's, which names the first failing operation.
func TestTransactionAnswerShapes(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "tx-in", TransactionID: "in-1"})
	pop := c.MustPop("/api/v1/pop/queue/tx-in", nil)
	m := pop.Messages[0]

	var res map[string]any
	c.Post("/api/v1/transaction", map[string]any{"operations": []any{
		map[string]any{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID},
		map[string]any{"type": "push", "items": []any{map[string]any{"queue": "tx-out", "payload": 1, "transactionId": "out-1"},
			map[string]any{"queue": "tx-out", "transactionId": "out-1"}}},
	}}).Want(t, http.StatusOK, &res)
	testutil.WantKeys(t, "transaction", res, "transactionId", "success", "results")
	if res["success"] != true {
		t.Fatalf("transaction %v", res)
	}
	results := res["results"].([]any)
	if len(results) != 3 {
		t.Fatalf("results %v, want one ack entry and two push entries", results)
	}
	testutil.WantKeys(t, "ack entry", results[0].(map[string]any), "index", "type", "success", "transactionId", "partitionId", "error", "dlq", "leaseReleased")
	for i, e := range results {
		em := e.(map[string]any)
		if em["index"] != float64(i) {
			t.Errorf("entry %d has index %v", i, em["index"])
		}
		if i > 0 {
			testutil.WantKeys(t, "push entry", em, "index", "type", "success", "status", "transactionId", "messageId", "partitionId", "queueName", "offset")
		}
	}
	if results[1].(map[string]any)["status"] != "queued" || results[2].(map[string]any)["status"] != "duplicate" { // a duplicate does not fail the transaction
		t.Errorf("push entries %v %v", results[1], results[2])
	}

	// Rollback: a refused ack answers success:false, an error naming the operation, no results.
	c.Post("/api/v1/transaction", map[string]any{"operations": []any{
		map[string]any{"type": "push", "items": []any{map[string]any{"queue": "tx-new"}}},
		map[string]any{"type": "ack", "transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID},
	}}).Want(t, http.StatusOK, &res)
	testutil.WantKeys(t, "rollback", res, "transactionId", "success", "error", "results")
	if res["success"] != false || res["error"] != "operation 1: Invalid or expired lease" || len(res["results"].([]any)) != 0 {
		t.Errorf("rollback %v", res)
	}
	// An invalid push item and an unknown type roll back too, and store nothing.
	for _, op := range []map[string]any{
		{"type": "push", "items": []any{map[string]any{"queue": "tx-new", "traceId": "nope"}}},
		{"type": "push"},
		{"type": "publish"},
	} {
		c.Post("/api/v1/transaction", map[string]any{"operations": []any{
			map[string]any{"type": "push", "items": []any{map[string]any{"queue": "tx-new"}}}, op,
		}}).Want(t, http.StatusOK, &res)
		if res["success"] != false || len(res["results"].([]any)) != 0 {
			t.Errorf("transaction with %v = %v, want a rollback", op, res)
		}
		if msg, _ := res["error"].(string); len(msg) < len("operation 1: ") || msg[:len("operation 1: ")] != "operation 1: " {
			t.Errorf("rollback error %q must name operation 1", res["error"])
		}
	}
	if c.Pop("/api/v1/pop/queue/tx-new", nil) != nil {
		t.Error("a rolled-back transaction stored a message")
	}
}
