package refserver

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// exampleState builds SPEC §2.3's example over HTTP on a manual clock: queue orders
// (Default empty, p0, p1, p2) read by fast, slow, late and queue mode, 30 s after the first
// push; plus the empty queue returns.
func exampleState(t *testing.T) (*testServer, *testutil.Client, map[string]string) {
	t.Helper()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"orders","namespace":"shop","task":"fulfil","options":{"leaseTime":600,"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"returns","namespace":"shop","task":"refund"}`).Want(t, http.StatusOK, nil)
	ids := map[string]string{}
	for _, p := range []struct {
		name string
		n    int
	}{{"p0", 4}, {"p1", 3}, {"p2", 2}} {
		ids[p.name] = c.PushN("orders", p.name, p.name, p.n)[0].PartitionID
	}
	if c.Pop("/api/v1/pop/queue/orders/partition/p2", testutil.Query("consumerGroup", "late", "subscriptionMode", "new")) != nil {
		t.Fatal("late popped something")
	}
	c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("consumerGroup", "slow", "subscriptionMode", "all", "batch", "2")), "slow", "completed")
	c.MustPop("/api/v1/pop/queue/orders/partition/p1", testutil.Query("consumerGroup", "slow", "subscriptionMode", "all", "batch", "2"))
	for range 2 {
		c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("batch", "1")), "", "failed")
	}
	ids["queueLease"] = c.MustPop("/api/v1/pop/queue/orders/partition/p0", testutil.Query("batch", "2")).LeaseID
	fast := c.MustPop("/api/v1/pop/queue/orders/partition/p2", testutil.Query("consumerGroup", "fast", "subscriptionMode", "all", "batch", "10"))
	c.AckBatch(map[string]any{"consumerGroup": "fast", "acknowledgments": []map[string]any{
		{"transactionId": "p2-0", "partitionId": ids["p2"], "leaseId": fast.LeaseID, "status": "completed"},
		{"transactionId": "p2-1", "partitionId": ids["p2"], "leaseId": fast.LeaseID, "status": "dlq"},
	}})
	srv.Advance(3 * time.Second)
	c.Push(testutil.Item{Queue: "orders", Partition: "p0", TransactionID: "p0-4", Payload: map[string]int{"n": 4}},
		testutil.Item{Queue: "orders", Partition: "p2", TransactionID: "p2-2", Payload: map[string]int{"n": 2}})
	for _, p := range []string{"p0", "p1", "p2"} {
		c.AckAll(c.MustPop("/api/v1/pop/queue/orders/partition/"+p, testutil.Query("consumerGroup", "fast", "subscriptionMode", "all", "batch", "10")), "fast", "completed")
	}
	srv.Advance(27 * time.Second)
	return srv, c, ids
}

func obj(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s = %v, want an object", what, v)
	}
	return m
}

func arr(t *testing.T, v any, what string) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%s = %v, want an array", what, v)
	}
	return l
}

var countKeys = []string{"total", "pending", "processing", "completed", "failed", "deadLetter"}

// R158, R159, §2.3: the queue list and the queue detail, key by key.
func TestQueueRoutesShapes_R158_R159(t *testing.T) {
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

// R160–R163, §2.3: the group list, a group's detail and the lagging list, key by key.
func TestGroupRoutesShapes_R160_R162_R163(t *testing.T) {
	t.Parallel()
	_, c, ids := exampleState(t)
	var groups []map[string]any
	c.Get("/api/v1/consumer-groups").Want(t, http.StatusOK, &groups)
	if len(groups) != 4 {
		t.Fatalf("groups = %v", groups)
	}
	slow := groups[3]
	testutil.WantKeys(t, "group summary", slow, "name", "queueName", "topics", "members", "partitionsWithLag", "totalLag",
		"maxTimeLag", "state", "conflation", "subscriptionMode", "subscriptionTimestamp", "subscriptionCreatedAt")
	if slow["name"] != "slow" || slow["totalLag"] != 9.0 || slow["maxTimeLag"] != 30.0 || slow["members"] != 2.0 ||
		slow["partitionsWithLag"] != 3.0 || slow["state"] != "Stable" || slow["subscriptionMode"] != "all" {
		t.Errorf("slow = %v", slow)
	}
	c.Get("/api/v1/consumer-groups?queue=returns").Want(t, http.StatusOK, &groups)
	if len(groups) != 0 {
		t.Errorf("groups on returns = %v", groups)
	}
	if r := c.Get("/api/v1/consumer-groups?queue=nope"); string(r.Body) != "[]" {
		t.Errorf("unknown queue: %s, want []", r.Body)
	}

	var detail map[string]any
	c.Get("/api/v1/consumer-groups/slow").Want(t, http.StatusOK, &detail)
	testutil.WantKeys(t, "group detail", detail, "orders")
	parts := arr(t, obj(t, detail["orders"], "orders")["partitions"], "partitions")
	if len(parts) != 4 {
		t.Fatalf("partitions = %v", parts)
	}
	p1 := obj(t, parts[2], "p1")
	testutil.WantKeys(t, "group partition", p1, "partition", "partitionId", "cursor", "offsetLag", "pending", "processing",
		"timeLagSeconds", "leaseActive", "workerId", "leaseExpiresAt", "lastConsumedAt", "totalConsumed", "retries")
	if p1["partitionId"] != ids["p1"] || p1["cursor"] != -1.0 || p1["pending"] != 1.0 || p1["processing"] != 2.0 || p1["leaseActive"] != true {
		t.Errorf("slow p1 = %v", p1)
	}
	testutil.WantTime(t, "leaseExpiresAt", p1["leaseExpiresAt"])
	c.Get("/api/v1/consumer-groups/__QUEUE_MODE__?queue=orders").Want(t, http.StatusOK, &detail)
	if p0 := obj(t, arr(t, obj(t, detail["orders"], "orders")["partitions"], "p")[1], "p0"); p0["workerId"] != ids["queueLease"] {
		t.Errorf("queue mode p0 = %v", p0)
	}
	c.Get("/api/v1/consumer-groups/nobody").WantError(t, http.StatusNotFound, "consumer group not found")
	c.Get("/api/v1/consumer-groups/slow?queue=returns").WantError(t, http.StatusNotFound, "consumer group not found")

	var lagging []map[string]any
	c.Get("/api/v1/consumer-groups/lagging?minLagSeconds=0&consumerGroup=slow").Want(t, http.StatusOK, &lagging)
	if len(lagging) != 3 {
		t.Fatalf("lagging = %v", lagging)
	}
	testutil.WantKeys(t, "lagging entry", lagging[1], "consumer_group", "queue_name", "partition_name", "partition_id",
		"offset_lag", "time_lag_seconds", "lag_hours", "oldest_unconsumed_at", "last_consumed_at", "worker_id")
	if lagging[1]["partition_name"] != "p1" || lagging[1]["lag_hours"] != 0.01 || lagging[1]["time_lag_seconds"] != 30.0 {
		t.Errorf("slow p1 lagging = %v", lagging[1])
	}
	if r := c.Get("/api/v1/consumer-groups/lagging"); r.Status != http.StatusOK || string(r.Body) != "[]" {
		t.Errorf("lagging above an hour: %d %s, want 200 []", r.Status, r.Body)
	}
	c.Get("/api/v1/consumer-groups/lagging?minLagSeconds=-1").WantError(t, http.StatusBadRequest, "minLagSeconds must be a non-negative integer")
	c.Get("/api/v1/consumer-groups/lagging?minLagSeconds=abc").WantError(t, http.StatusBadRequest, "minLagSeconds must be a non-negative integer")
}

// R164–R168, §2.3: browsing and one message, key by key; the parameters' refusals.
func TestMessageRoutesShapes_R164_R167_R168_R171(t *testing.T) {
	t.Parallel()
	_, c, ids := exampleState(t)
	var body map[string]any
	c.Get("/api/v1/messages?queue=orders&partition=p0").Want(t, http.StatusOK, &body)
	testutil.WantKeys(t, "browse", body, "messages", "mode")
	testutil.WantKeys(t, "mode", obj(t, body["mode"], "mode"), "hasQueueMode", "busGroupsCount", "type")
	msgs := arr(t, body["messages"], "messages")
	if len(msgs) != 5 {
		t.Fatalf("messages = %v", msgs)
	}
	entryKeys := []string{"id", "transactionId", "partitionId", "partition", "queue", "queuePath", "namespace", "task",
		"queuePriority", "offset", "traceId", "producerSub", "createdAt", "status", "queueStatus", "busStatus", "leaseExpiresAt"}
	e1 := obj(t, msgs[3], "p0-1")
	testutil.WantKeys(t, "message entry", e1, entryKeys...)
	if e1["transactionId"] != "p0-1" || e1["status"] != "processing" || e1["offset"] != 1.0 {
		t.Errorf("p0-1 = %v", e1)
	}
	testutil.WantKeys(t, "busStatus", obj(t, e1["busStatus"], "busStatus"), "consumedBy", "totalGroups")
	c.Get("/api/v1/messages?queue=orders&partition=p0&payload=true&limit=1&order=asc").Want(t, http.StatusOK, &body)
	first := obj(t, arr(t, body["messages"], "messages")[0], "p0-0")
	testutil.WantKeys(t, "entry with payload", first, append(entryKeys, "payload")...)
	if testutil.JSONText(t, first["payload"]) != `{"n":0}` {
		t.Errorf("payload = %s", testutil.JSONText(t, first["payload"]))
	}
	if r := c.Get("/api/v1/messages?queue=returns"); string(r.Body) != `{"messages":[],"mode":{"hasQueueMode":false,"busGroupsCount":0,"type":"none"}}` {
		t.Errorf("empty browse = %s", r.Body)
	}

	var detail map[string]any
	c.Get("/api/v1/messages/"+ids["p0"]+"/p0-0").Want(t, http.StatusOK, &detail)
	testutil.WantKeys(t, "message detail", detail, append(entryKeys, "payload", "isEncrypted", "errorMessage", "retryCount",
		"queueConfig", "mode", "consumerGroups")...)
	testutil.WantKeys(t, "queueConfig", obj(t, detail["queueConfig"], "queueConfig"), "leaseTime", "retryLimit", "retryDelay", "ttl", "priority")
	testutil.WantKeys(t, "detail mode", obj(t, detail["mode"], "mode"), "hasQueueMode", "busGroupsCount", "consumedByGroups", "type")
	cgs := arr(t, detail["consumerGroups"], "consumerGroups")
	if len(cgs) != 4 {
		t.Fatalf("consumerGroups = %v", cgs)
	}
	qm := obj(t, cgs[0], "queue mode")
	testutil.WantKeys(t, "consumer group", qm, "name", "consumed", "leaseExpiresAt", "status", "deliveryAttempt")
	if qm["name"] != "__QUEUE_MODE__" || qm["status"] != "dead_letter" || qm["deliveryAttempt"] != 2.0 {
		t.Errorf("queue mode = %v", qm)
	}
	c.Get("/api/v1/messages/"+ids["p0"]+"/nope").WantError(t, http.StatusNotFound, "message not found")
	c.Get("/api/v1/messages/nope/p0-0").WantError(t, http.StatusNotFound, "message not found")

	for query, want := range map[string]string{
		"":                          "queue is required",
		"queue=nope":                "queue not found",
		"queue=orders&partition=p9": "partition not found",
		"queue=orders&limit=0":      "limit must be an integer from 1 to 1000",
		"queue=orders&offset=x":     "offset must be a non-negative integer",
		"queue=orders&fromOffset=-1&partition=p0": "fromOffset must be a non-negative integer",
		"queue=orders&fromOffset=1":               "fromOffset requires partition",
		"queue=orders&status=failed":              "status must be one of pending, processing, completed, dead_letter",
		"queue=orders&order=up":                   "order must be asc or desc",
		"queue=orders&payload=yes":                "payload must be a boolean",
		"queue=orders&from=yesterday":             "from must be an RFC 3339 timestamp",
		"queue=orders&to=2026":                    "to must be an RFC 3339 timestamp",
	} {
		r := c.Get("/api/v1/messages?" + query)
		status := http.StatusBadRequest
		if want == "queue not found" || want == "partition not found" {
			status = http.StatusNotFound
		}
		var e map[string]string
		r.Want(t, status, &e)
		if e["error"] != want {
			t.Errorf("?%s: %q, want %q", query, e["error"], want)
		}
	}
}

// R169, R170, R172: health is open and says which broker it is; the overview needs the token
// like every introspection route; names are percent-decoded; other methods are 405.
func TestHealthOverviewAuthAndPaths_R169_R170_R172(t *testing.T) {
	t.Parallel()
	_, open := start(t, withToken("tok"))
	var health map[string]any
	open.Get("/health").Want(t, http.StatusOK, &health)
	testutil.WantKeys(t, "health", health, "database", "server", "status", "version")
	if health["database"] != "memory" || health["server"] != "queen-go reference broker" || health["status"] != "healthy" || health["version"] == "" {
		t.Errorf("health = %v", health)
	}
	for _, path := range []string{"/api/v1/status/queues", "/api/v1/status/queues/orders", "/api/v1/consumer-groups",
		"/api/v1/consumer-groups/lagging", "/api/v1/consumer-groups/slow", "/api/v1/messages?queue=orders",
		"/api/v1/messages/x/y", "/api/v1/resources/overview"} {
		open.Get(path).WantError(t, http.StatusUnauthorized, "Authentication required")
	}
	open.Token = "tok"
	open.Get("/api/v1/consumer-groups").Want(t, http.StatusOK, nil)

	_, c, _ := exampleState(t)
	var o map[string]any
	c.Get("/api/v1/resources/overview").Want(t, http.StatusOK, &o)
	testutil.WantKeys(t, "overview", o, "queues", "partitions", "namespaces", "tasks", "messages", "lag", "throughput", "timestamp", "statsAge")
	if testutil.JSONText(t, o["lag"]) != `{"offset":{"avg":2,"max":4,"median":3,"min":0},"time":{"avg":18,"max":30,"median":30,"min":0}}` {
		t.Errorf("lag = %s", testutil.JSONText(t, o["lag"]))
	}
	testutil.WantKeys(t, "throughput", obj(t, o["throughput"], "throughput"), "ingestedPerSecond", "processedPerSecond")
	testutil.WantTime(t, "timestamp", o["timestamp"])

	c.Push(testutil.Item{Queue: "a/b c", TransactionID: "x/y"})
	var d map[string]any
	c.Get("/api/v1/status/queues/"+url.PathEscape("a/b c")).Want(t, http.StatusOK, &d)
	pid := obj(t, arr(t, d["partitions"], "p")[0], "Default")["id"].(string)
	c.Get("/api/v1/messages/"+pid+"/"+url.PathEscape("x/y")).Want(t, http.StatusOK, nil)
	c.Get("/api/v1/status/queues/..").WantError(t, http.StatusNotFound, "not found")
	c.Get("/api/v1/consumer-groups/"+url.PathEscape("bad\x01")).WantError(t, http.StatusBadRequest, "group")

	for _, rt := range [][2]string{{"POST", "/api/v1/status/queues"}, {"DELETE", "/api/v1/messages/x/y"},
		{"PUT", "/api/v1/resources/overview"}, {"POST", "/api/v1/messages"}, {"HEAD", "/api/v1/status/queues"}} {
		if r := c.Do(rt[0], rt[1], ""); r.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", rt[0], rt[1], r.Status)
		}
	}
}
