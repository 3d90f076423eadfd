package refserver

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Health is open and says which broker it is; the overview needs the token
// like every introspection route; names are percent-decoded; other methods are 405.
func TestHealthOverviewAndReadRoutes(t *testing.T) {
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
