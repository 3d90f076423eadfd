package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Groups keep their own cursors; deliveryAttempt counts per group.
func TestGroupsAreIndependent(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("fan", "", "f", 2)
	a := c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "a", "subscriptionMode", "all", "batch", "2"))
	c.AckAll(a, "a", "failed")
	a = c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "a", "batch", "2"))
	b := c.MustPop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "b", "subscriptionMode", "all", "batch", "2"))
	if a.Messages[0].DeliveryAttempt != 2 || b.Messages[0].DeliveryAttempt != 1 || len(b.Messages) != 2 {
		t.Fatalf("group a attempt %d, group b attempt %d (%d messages)", a.Messages[0].DeliveryAttempt, b.Messages[0].DeliveryAttempt, len(b.Messages))
	}
	c.AckAll(b, "b", "completed")
	if c.Pop("/api/v1/pop/queue/fan", testutil.Query("consumerGroup", "b")) != nil {
		t.Error("group b got its acked messages again")
	}
	c.AckAll(a, "a", "completed")
}

// A named group starts new by default; subscriptionFrom reads from a time.
func TestNewAndTimestampStarts(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "sub", TransactionID: "old"})
	srv.Advance(time.Minute)
	mark := srv.Now()
	srv.Advance(time.Minute)
	c.Push(testutil.Item{Queue: "sub", TransactionID: "mid"})
	if c.Pop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "fresh")) != nil {
		t.Fatal("a new group's first pop got history")
	}
	srv.Advance(time.Second)
	c.Push(testutil.Item{Queue: "sub", TransactionID: "new"})
	if res := c.MustPop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "fresh", "batch", "10")); res.Messages[0].TransactionID != "new" {
		t.Fatalf("new group got %s", res.Messages[0].TransactionID)
	}
	res := c.MustPop("/api/v1/pop/queue/sub", testutil.Query("consumerGroup", "from", "batch", "10", "subscriptionFrom", mark.Format(time.RFC3339Nano)))
	if len(res.Messages) != 2 || res.Messages[0].TransactionID != "mid" {
		t.Fatalf("subscriptionFrom got %+v", res.Messages)
	}
}

// All mode and queue mode start at the oldest message, on every partition.
func TestAnAllStartAndQueueModeReadEverything(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "hist", Partition: "a", TransactionID: "h1"})
	if c.Pop("/api/v1/pop/queue/hist", testutil.Query("consumerGroup", "late", "subscriptionMode", "all")) == nil {
		t.Fatal("subscriptionMode=all missed history")
	}
	c.Push(testutil.Item{Queue: "hist", Partition: "b", TransactionID: "h2"}) // a later partition
	if res := c.MustPop("/api/v1/pop/queue/hist/partition/b", testutil.Query("consumerGroup", "late", "subscriptionMode", "new")); res.Messages[0].TransactionID != "h2" {
		t.Fatalf("the stored start did not apply to the new partition: %+v", res.Messages)
	}
	if res := c.MustPop("/api/v1/pop/queue/hist/partition/a", testutil.Query("subscriptionMode", "new")); res.Messages[0].TransactionID != "h1" {
		t.Fatalf("queue mode did not start at the oldest message")
	}
}

// A named group's first pop decides its start even when the queue does not
// exist yet; the decision takes effect once a push creates the queue, and "new" counts from
// that first pop's arrival, so the first message pushed is delivered. The pop creates nothing.
func TestAStartDecidedBeforeTheQueueExistsHolds(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	if c.Pop("/api/v1/pop/queue/not-yet", testutil.Query("consumerGroup", "early")) != nil {
		t.Fatal("a pop of an unknown queue leased something")
	}
	if c.Pop("/api/v1/pop/queue/not-yet", testutil.Query("consumerGroup", "all-early", "subscriptionMode", "all")) != nil {
		t.Fatal("a pop of an unknown queue leased something")
	}
	c.Delete("/api/v1/resources/queues/not-yet").WantError(t, http.StatusNotFound, "queue not found")
	c.PushN("not-yet", "", "m", 1)
	got := c.MustPop("/api/v1/pop/queue/not-yet", testutil.Query("consumerGroup", "early"))
	if len(got.Messages) != 1 || got.Messages[0].TransactionID != "m-0" {
		t.Fatalf("early group got %+v, want m-0: its new start counts from its first pop", got.Messages)
	}
	got = c.MustPop("/api/v1/pop/queue/not-yet", testutil.Query("consumerGroup", "all-early", "subscriptionMode", "new"))
	if len(got.Messages) != 1 {
		t.Fatalf("the later new pop changed the stored all start: got %+v", got.Messages)
	}
	if c.Pop("/api/v1/pop/queue/not-yet", testutil.Query("consumerGroup", "late")) != nil {
		t.Fatal("a group first seen after the push received an older message")
	}
}

// Seek back re-reads from a time and releases the group's lease.
func TestSeekBackAndToTheEnd(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	start := srv.Now()
	c.PushN("seek", "", "s", 2)
	res := c.MustPop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "10"))
	c.AckAll(res, "g", "completed")
	c.Post("/api/v1/consumer-groups/g/queues/seek/seek", map[string]any{"timestamp": start.Format(time.RFC3339Nano)}).Want(t, http.StatusOK, nil)
	again := c.MustPop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g", "batch", "10"))
	if len(again.Messages) != 2 || again.Messages[0].DeliveryAttempt != 2 {
		t.Fatalf("after seek back: %+v", again.Messages)
	}
	c.Post("/api/v1/consumer-groups/g/queues/seek/seek", `{"toEnd":true}`).Want(t, http.StatusOK, nil)
	if c.Pop("/api/v1/pop/queue/seek", testutil.Query("consumerGroup", "g")) != nil {
		t.Fatal("after seek to end the group got old messages")
	}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": again.Messages[0].TransactionID, "partitionId": again.PartitionID,
		"leaseId": again.LeaseID, "consumerGroup": "g"}).Want(t, http.StatusOK, &acks)
	if acks[0].Success {
		t.Fatal("an ack under a lease the seek released was accepted")
	}
	c.Post("/api/v1/consumer-groups/g/queues/nope/seek", `{"toEnd":true}`).WantError(t, http.StatusNotFound, "queue not found")
}
