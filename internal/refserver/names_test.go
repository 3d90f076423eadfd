package refserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queenmq/queen-go/internal/testutil"
)

// escapeAll escapes a name as a path segment, dots included, so "." and ".." reach the route
// as names instead of as path steps.
func escapeAll(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), ".", "%2E")
}

// jsonString quotes s as JSON (control characters as \u escapes).
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Every route that takes a queue, partition or group name refuses a bad one with 400
// naming the field and the rule, and stores nothing.
func TestBadNamesAreRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.Push(testutil.Item{Queue: "orders", Partition: "p"})
	held := c.MustPop("/api/v1/pop/queue/orders", testutil.Query("consumerGroup", "billing", "subscriptionMode", "all"))
	// billing's ack of what it holds, sent beside every bad group name below: it must not be applied
	billing := `{"transactionId":` + jsonString(held.Messages[0].TransactionID) + `,"partitionId":` +
		jsonString(held.Messages[0].PartitionID) + `,"leaseId":` + jsonString(held.LeaseID) + `,"consumerGroup":"billing"}`
	ackAs := func(group string) string { return strings.TrimSuffix(billing, `"billing"}`) + jsonString(group) + "}" }

	bad := map[string]string{
		".":                      `"." or ".."`,
		"..":                     `"." or ".."`,
		strings.Repeat("q", 256): "longer than 255 bytes",
		"a\x01b":                 "control character",
		"a\x7f":                  "control character",
		"bad\xffutf8":            "not valid UTF-8",
	}
	const rule = "1 to 255 bytes of UTF-8 without control characters"
	for name, why := range bad {
		e := escapeAll(name)
		qs := url.QueryEscape(name)
		pushOf := func(queue, partition string) string {
			return `{"items":[{"queue":"orders"},{"queue":` + jsonString(queue) + `,"partition":` + jsonString(partition) + `}]}`
		}
		checks := []struct {
			what, method, path, body, field string
		}{
			{"push queue", "POST", "/api/v1/push", pushOf(name, "p"), "items[1].queue"},
			{"push partition", "POST", "/api/v1/push", pushOf("orders", name), "items[1].partition"},
			{"pop queue", "GET", "/api/v1/pop/queue/" + e, "", "queue"},
			{"pop partition", "GET", "/api/v1/pop/queue/orders/partition/" + e, "", "partition"},
			{"pop group", "GET", "/api/v1/pop/queue/orders?consumerGroup=" + qs, "", "consumerGroup"},
			{"discovery pop group", "GET", "/api/v1/pop?namespace=n&consumerGroup=" + qs, "", "consumerGroup"},
			{"configure", "POST", "/api/v1/configure", `{"queue":` + jsonString(name) + `}`, "queue"},
			{"seek group", "POST", "/api/v1/consumer-groups/" + e + "/queues/orders/seek", `{"toEnd":true}`, "group"},
			{"seek queue", "POST", "/api/v1/consumer-groups/billing/queues/" + e + "/seek", `{"toEnd":true}`, "queue"},
			{"delete group", "DELETE", "/api/v1/consumer-groups/" + e, "", "group"},
			{"delete group on queue: group", "DELETE", "/api/v1/consumer-groups/" + e + "/queues/orders", "", "group"},
			{"delete group on queue: queue", "DELETE", "/api/v1/consumer-groups/billing/queues/" + e, "", "queue"},
			{"delete queue", "DELETE", "/api/v1/resources/queues/" + e, "", "queue"},
			{"dlq queue", "GET", "/api/v1/dlq?queue=" + qs, "", "queue"},
			{"dlq group", "GET", "/api/v1/dlq?consumerGroup=" + qs, "", "consumerGroup"},
			{"dlq partition", "GET", "/api/v1/dlq?partition=" + qs, "", "partition"},
			{"ack group", "POST", "/api/v1/ack", ackAs(name), "consumerGroup"},
			{"ack batch group", "POST", "/api/v1/ack/batch", `{"consumerGroup":` + jsonString(name) + `,"acknowledgments":[` + billing + `]}`, "consumerGroup"},
			{"ack batch item group", "POST", "/api/v1/ack/batch", `{"acknowledgments":[` + billing + `,` + ackAs(name) + `]}`, "acknowledgments[1].consumerGroup"},
			{"transaction ack group", "POST", "/api/v1/transaction", `{"operations":[{"type":"ack",` + billing[1:] +
				`,{"type":"ack",` + ackAs(name)[1:] + `]}`, "operations[1].consumerGroup"},
		}
		for _, ch := range checks {
			if ch.body != "" && !utf8.ValidString(name) {
				continue // a body with invalid UTF-8 is refused whole, tested on its own
			}
			t.Run(ch.what, func(t *testing.T) {
				c.Do(ch.method, ch.path, ch.body).WantError(t, http.StatusBadRequest, ch.field, why, rule)
			})
		}
	}

	// Nothing was stored or removed: orders still holds exactly its one message, and billing
	// its cursor there.
	if got := srv.Lag("orders", "billing"); got != 1 {
		t.Fatalf("billing's lag on orders = %d, want 1", got)
	}
	res := c.MustPop("/api/v1/pop/queue/orders", testutil.Query("batch", "10"))
	if len(res.Messages) != 1 {
		t.Fatalf("orders holds %d messages, want 1", len(res.Messages))
	}
}

// A 2 MB queue name is refused at push, so no queue exists that pop and delete cannot name.
func TestAHugeQueueNameIsRefusedAtPush(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	huge := strings.Repeat("q", 2<<20)
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"`+huge+`"}]}`).
		WantError(t, http.StatusBadRequest, "items[0].queue", "longer than 255 bytes")
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"`+strings.Repeat("q", 255)+`"}]}`).Want(t, http.StatusCreated, nil)
}
