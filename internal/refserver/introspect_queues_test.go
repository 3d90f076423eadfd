package refserver

import (
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The queue list and the queue detail, key by key.
func TestQueueListAndDetailAnswers(t *testing.T) {
	t.Parallel()
	_, c, _ := exampleState(t)
	var body map[string]any
	c.Get("/api/v1/status/queues?namespace=shop").Want(t, http.StatusOK, &body)
	testutil.WantKeys(t, "queue list", body, "queues", "pagination", "total")
	if body["total"] != 2.0 {
		t.Errorf("total = %v, want 2", body["total"])
	}
	testutil.WantKeys(t, "pagination", obj(t, body["pagination"], "pagination"), "limit", "offset")
	qs := arr(t, body["queues"], "queues")
	if len(qs) != 2 {
		t.Fatalf("queues = %v", qs)
	}
	orders := obj(t, qs[1], "orders")
	testutil.WantKeys(t, "queue summary", orders, "id", "name", "namespace", "task", "createdAt", "partitions", "messages")
	testutil.WantTime(t, "createdAt", orders["createdAt"])
	testutil.WantKeys(t, "summary messages", obj(t, orders["messages"], "messages"), "total", "pending", "processing", "completed", "deadLetter")
	if testutil.JSONText(t, orders["messages"]) != `{"completed":1,"deadLetter":2,"pending":8,"processing":2,"total":11}` {
		t.Errorf("orders messages = %s", testutil.JSONText(t, orders["messages"]))
	}

	c.Get("/api/v1/status/queues/orders").Want(t, http.StatusOK, &body)
	testutil.WantKeys(t, "queue detail", body, "queue", "partitions", "totals")
	qd := obj(t, body["queue"], "queue")
	testutil.WantKeys(t, "detail queue", qd, "id", "name", "namespace", "task", "priority", "createdAt", "config", "options")
	testutil.WantKeys(t, "config", obj(t, qd["config"], "config"), "leaseTime", "retryLimit", "deadLetterQueue", "retryDelay", "ttl", "maxQueueSize")
	parts := arr(t, body["partitions"], "partitions")
	p0 := obj(t, parts[1], "p0")
	testutil.WantKeys(t, "partition", p0, "id", "name", "createdAt", "lastOffset", "messages", "stats", "cursor", "lastActivity", "oldestMessage", "newestMessage")
	testutil.WantKeys(t, "partition messages", obj(t, p0["messages"], "messages"), countKeys...)
	testutil.WantKeys(t, "cursor", obj(t, p0["cursor"], "cursor"), "totalConsumed", "batchesConsumed")
	if testutil.JSONText(t, p0["cursor"]) != `{"batchesConsumed":3,"totalConsumed":7}` || p0["lastOffset"] != 4.0 {
		t.Errorf("p0 cursor %s lastOffset %v", testutil.JSONText(t, p0["cursor"]), p0["lastOffset"])
	}
	dflt := obj(t, parts[0], "Default")
	for _, k := range []string{"lastActivity", "oldestMessage", "newestMessage"} {
		if v, ok := dflt[k]; !ok || v != nil {
			t.Errorf("Default %s = %v, want null", k, v)
		}
	}
	totals := obj(t, body["totals"], "totals")
	testutil.WantKeys(t, "totals", totals, append([]string{"messages"}, countKeys...)...)

	c.Get("/api/v1/status/queues/nope").WantError(t, http.StatusNotFound, "queue not found")
	c.Get("/api/v1/status/queues?limit=0").WantError(t, http.StatusBadRequest, "limit must be an integer from 1 to 1000")
	c.Get("/api/v1/status/queues?limit=1001").WantError(t, http.StatusBadRequest, "limit must be an integer from 1 to 1000")
	c.Get("/api/v1/status/queues?offset=-1").WantError(t, http.StatusBadRequest, "offset must be a non-negative integer")
	c.Get("/api/v1/status/queues?limit=1&offset=1").Want(t, http.StatusOK, &body)
	if qs := arr(t, body["queues"], "queues"); len(qs) != 1 || obj(t, qs[0], "q")["name"] != "orders" || body["total"] != 2.0 {
		t.Errorf("page 2 of 1 = %v", body)
	}
}
