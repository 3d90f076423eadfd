package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// A push-created queue has a 300 s lease; deadLetterQueue:false is ignored.
func Test015ConfigureDefaultsAndIgnoredDeadLetterQueue(t *testing.T) {
	t.Parallel()
	srv, c := start015(t, withManualClock())
	c.Push("q", "p", "a")
	all := testutil.Query("consumerGroup", "g", "subscriptionMode", "all")
	c.Pop("/api/v1/pop/queue/q/partition/p", all)
	srv.Advance(299 * time.Second)
	if ids, _ := c.Pop("/api/v1/pop/queue/q", all); len(ids) != 0 {
		t.Fatalf("redelivered before 300 s: %v", ids)
	}
	srv.Advance(time.Second)
	ids, _ := c.Pop("/api/v1/pop/queue/q", all)
	wantIDs(t, "after 300 s", ids, "a")

	c.Post("/api/v1/configure", `{"queue":"d","options":{"retryLimit":0,"deadLetterQueue":false}}`).Want(t, http.StatusOK, nil)
	c.Push("d", "p", "x")
	_, res := c.Pop("/api/v1/pop/queue/d", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("deadLetterQueue:false is ignored on 0.15: %+v", acks[0])
	}
}

// A seek excludes a message exactly at T and moves only partitions with a cursor.
func Test015Seek(t *testing.T) {
	t.Parallel()
	srv, c := start015(t, withManualClock())
	c.Push("q", "p", "a")
	srv.Advance(time.Second)
	c.Push("q", "p", "b")
	c.Push("q", "other", "x")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	c.Ack(res, "g", "completed", "completed")
	tb := srv.Now().UTC().Format(time.RFC3339Nano) // b's createdAt: the clock has not moved
	var seek map[string]any
	c.Post("/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp":"`+tb+`"}`).Want(t, http.StatusOK, &seek)
	if seek["partitionsUpdated"] != 1.0 {
		t.Fatalf("only the partition with a cursor moves: %v", seek)
	}
	ids, _ := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after a seek to b's createdAt", ids)
	c.Post("/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp":"yesterday"}`).Want(t, http.StatusOK, &seek)
	if seek["success"] != false {
		t.Fatalf("an unparsable timestamp is a 200 failure: %v", seek)
	}
}

// The list's id is the message id, there is no total, and an offset above 0 is 0.15's NULL.
func Test015DeadLetterList(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":0}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a", "b")
	for range 2 {
		_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query())
		c.Ack(res, "__QUEUE_MODE__", "failed")
	}
	var page map[string]any
	c.Get("/api/v1/dlq?queue=q&limit=1&partition=nope").Want(t, http.StatusOK, &page)
	if _, ok := page["total"]; ok {
		t.Fatalf("no total on 0.15: %v", page)
	}
	if n := len(page["messages"].([]any)); n != 2 {
		t.Fatalf("limit caps nothing and partition filters nothing: %d entries", n)
	}
	if got := c.Get("/api/v1/dlq?queue=q&offset=1"); got.Status != http.StatusOK || string(got.Body) != `{"success":true,"value":null}` {
		t.Fatalf("offset 1: %d %s, want 0.15's NULL answer", got.Status, got.Body)
	}
}
