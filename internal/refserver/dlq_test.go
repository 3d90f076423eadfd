package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// retryLimit 1 delivers twice, then files a dead letter for that group only.
func TestAMessageIsDeadLetteredOnceItsRetriesAreSpent(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"retry","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push(testutil.Item{Queue: "retry", TransactionID: "r1", Payload: "x"})
	for attempt := 1; attempt <= 2; attempt++ {
		res := c.MustPop("/api/v1/pop/queue/retry", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
		if res.Messages[0].DeliveryAttempt != attempt {
			t.Fatalf("attempt %d delivered with deliveryAttempt %d", attempt, res.Messages[0].DeliveryAttempt)
		}
		acks := c.AckAll(res, "g", "failed")
		if acks[0].DLQ != (attempt == 2) {
			t.Fatalf("attempt %d: dlq %v", attempt, acks[0].DLQ)
		}
	}
	page := c.DLQ(testutil.Query("queue", "retry", "consumerGroup", "g"))
	if page.Total != 1 || page.Messages[0].ErrorMessage != "Retries exhausted" || page.Messages[0].RetryCount != 1 || string(page.Messages[0].Data) != `"x"` {
		t.Fatalf("dead letters %+v", page)
	}
	if page := c.DLQ(testutil.Query("consumerGroup", "other")); page.Total != 0 {
		t.Errorf("filter by another group found %d", page.Total)
	}
	if c.Pop("/api/v1/pop/queue/retry", nil) == nil { // queue mode still reads it
		t.Error("another group lost the dead-lettered message")
	}
}

// Filters, paging and total.
func TestTheDeadLetterListPages(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.PushN("pg", "", "p", 3)
	res := c.MustPop("/api/v1/pop/queue/pg", testutil.Query("batch", "3"))
	for _, m := range res.Messages {
		srv.Advance(time.Second)
		c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": "dlq"}}})
	}
	page := c.DLQ(testutil.Query("queue", "pg", "limit", "2", "offset", "1"))
	if page.Total != 3 || len(page.Messages) != 2 || page.Pagination.Limit != 2 || page.Pagination.Offset != 1 {
		t.Fatalf("page %+v", page)
	}
	if page.Messages[0].TransactionID != "p-1" || page.Messages[1].TransactionID != "p-0" { // failedAt descending
		t.Errorf("order %s, %s", page.Messages[0].TransactionID, page.Messages[1].TransactionID)
	}
	from := srv.Now().Add(-time.Second).Format(time.RFC3339Nano)
	if page := c.DLQ(testutil.Query("from", from)); page.Total != 2 {
		t.Errorf("from %s matched %d, want 2", from, page.Total)
	}
	if page := c.DLQ(testutil.Query("queue", "unknown")); page.Total != 0 || page.Messages == nil {
		t.Errorf("unknown queue: %+v, want an empty list", page)
	}
}

// With deadLetterQueue false, a dlq ack drops the message: dlq false, nothing listed.
func TestAQueueWithoutDeadLettersDropsGivenUpMessages(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"drop","options":{"deadLetterQueue":false}}`).Want(t, http.StatusOK, nil)
	c.Push(testutil.Item{Queue: "drop"})
	acks := c.AckAll(c.MustPop("/api/v1/pop/queue/drop", nil), "", "dlq")
	if acks[0].DLQ {
		t.Fatal("a dropped message reported dlq true")
	}
	if page := c.DLQ(testutil.Query("queue", "drop")); page.Total != 0 {
		t.Fatalf("a dropped message was filed: %+v", page)
	}
	if c.Pop("/api/v1/pop/queue/drop", nil) != nil {
		t.Fatal("a dropped message came back")
	}
}

// A replay wakes a waiting pop and is read by every group, from deliveryAttempt 1.
func TestAReplayWakesAWaitingPop(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.Push(testutil.Item{Queue: "rp", TransactionID: "orig", Payload: map[string]int{"v": 7}})
	acks := c.AckAll(c.MustPop("/api/v1/pop/queue/rp", nil), "", "dlq")
	if !acks[0].DLQ {
		t.Fatal("not filed")
	}
	id := c.DLQ(testutil.Query("queue", "rp")).Messages[0].ID
	got := make(chan *testutil.PopResult, 1)
	go func() { got <- c.Pop("/api/v1/pop/queue/rp", testutil.Query("wait", "true", "timeout", "30000")) }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	c.Post("/api/v1/dlq/"+id+"/replay", "").Want(t, http.StatusOK, nil)
	res := testutil.Recv(t, got, "the replay to wake the waiting pop")
	if res == nil || res.Messages[0].TransactionID != "dlq:"+id || string(res.Messages[0].Data) != `{"v":7}` || res.Messages[0].DeliveryAttempt != 1 {
		t.Fatalf("replayed copy %+v", res)
	}
	if other := c.MustPop("/api/v1/pop/queue/rp", testutil.Query("consumerGroup", "late", "subscriptionMode", "all", "batch", "5")); len(other.Messages) != 2 {
		t.Fatalf("another group read %d messages, want the original and the copy", len(other.Messages))
	}
	if page := c.DLQ(testutil.Query("queue", "rp")); page.Total != 0 {
		t.Fatal("the replayed dead letter is still listed")
	}
}
