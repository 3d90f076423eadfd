package refserver

import (
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Browsing and one message, key by key; the parameters' refusals.
func TestBrowseAndMessageDetailAnswers(t *testing.T) {
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
