package refserver

import (
	"net/http"
	"slices"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// The group list, a group's detail and the lagging list, key by key.
func TestGroupListDetailAndLaggingAnswers(t *testing.T) {
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

// The group list and the lagging list come a page at a time: limit (1 to 1000, default 1000)
// and offset (default 0) are applied after their order, and a bad one is refused naming it.
func TestGroupListAndLaggingArePaged(t *testing.T) {
	t.Parallel()
	_, c, _ := exampleState(t)
	names := func(path, key string) []any {
		t.Helper()
		var list []map[string]any
		c.Get(path).Want(t, http.StatusOK, &list)
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = e[key]
		}
		return out
	}
	all := names("/api/v1/consumer-groups", "name")
	if len(all) != 4 {
		t.Fatalf("groups = %v", all)
	}
	for query, want := range map[string][]any{
		"limit=1":          all[:1],
		"limit=2&offset=1": all[1:3],
		"offset=3":         all[3:],
		"offset=4":         {},
		"limit=1000":       all,
	} {
		if got := names("/api/v1/consumer-groups?"+query, "name"); !slices.Equal(got, want) {
			t.Errorf("groups %s = %v, want %v", query, got, want)
		}
	}
	lagging := names("/api/v1/consumer-groups/lagging?minLagSeconds=0", "partition_id")
	if len(lagging) < 4 {
		t.Fatalf("lagging = %v", lagging)
	}
	if got := names("/api/v1/consumer-groups/lagging?minLagSeconds=0&limit=2&offset=1", "partition_id"); !slices.Equal(got, lagging[1:3]) {
		t.Errorf("lagging page = %v, want %v", got, lagging[1:3])
	}
	for _, path := range []string{"/api/v1/consumer-groups", "/api/v1/consumer-groups/lagging"} {
		for query, why := range map[string]string{
			"limit=0":    "limit must be an integer from 1 to 1000",
			"limit=1001": "limit must be an integer from 1 to 1000",
			"limit=x":    "limit must be an integer from 1 to 1000",
			"offset=-1":  "offset must be a non-negative integer",
			"offset=1.5": "offset must be a non-negative integer",
		} {
			c.Get(path+"?"+query).WantError(t, http.StatusBadRequest, why)
		}
	}
}
