package refserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// A lease ends once as many acks as it leased messages came, wherever they point; acking
// only the last keeps it.
func Test015LeaseEndsOnceItsAcksAreCounted(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	last := &testutil.PopResult{Messages: res.Messages[2:]}
	if acks := c.Ack(last, "g", "completed"); acks[0].LeaseReleased {
		t.Fatalf("acking only the last message released the lease: %+v", acks[0])
	}
	var refused map[string]any
	c.Get("/api/v1/pop/queue/q/partition/p?"+all.Encode()).Want(t, http.StatusOK, &refused)
	if refused["error"] != "lease_held" {
		t.Fatalf("the lease still holds: want lease_held, got %v", refused)
	}
	if acks := c.Ack(res, "g", "completed", "completed"); !acks[1].LeaseReleased {
		t.Fatalf("the third ack of three ends the lease: %+v", acks)
	}
}

// In a batch ack, a completed above a failed moves the cursor past it and loses the failed
// message; an unfenced completed on an earlier message moves the cursor back.
func Test015CompletedAboveAFailedLosesIt(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	all := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	c.Ack(res, "g", "completed", "failed", "completed")
	ids, _ := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after completed, failed, completed", ids) // 2.0 would redeliver b and c

	m := res.Messages[0]
	c.Post("/api/v1/ack", map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "consumerGroup": "g"}).Want(t, http.StatusOK, nil)
	ids, _ = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	wantIDs(t, "after re-acking a without a lease", ids, "b", "c")
}

// A failed from a group that never read the partition files the message at once, and the
// retry counter is not reset after a dead letter.
func Test015FailedWithoutBudget(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":1}}`).Want(t, http.StatusOK, nil)
	c.Push("q", "p", "a")
	all := testutil.Query("consumerGroup", "g", "batch", "1", "subscriptionMode", "all")
	_, res := c.Pop("/api/v1/pop/queue/q/partition/p", all)
	stranger := c.AckBatch(map[string]any{"consumerGroup": "stranger", "acknowledgments": []map[string]any{
		{"transactionId": "a", "partitionId": res.Messages[0].PartitionID, "status": "failed"}}})
	if !stranger[0].DLQ {
		t.Fatalf("a failed from a group that never popped goes to the DLQ: %+v", stranger[0])
	}
	if acks := c.Ack(res, "g", "failed"); acks[0].DLQ {
		t.Fatalf("the first failed of g spends its budget: %+v", acks[0])
	}
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("the second failed files a: %+v", acks[0])
	}
	c.Push("q", "p", "b")
	_, res = c.Pop("/api/v1/pop/queue/q/partition/p", all)
	if acks := c.Ack(res, "g", "failed"); !acks[0].DLQ {
		t.Fatalf("b's first failed files it: the counter kept a's spent retry: %+v", acks[0])
	}
}

// An empty acknowledgments array is never answered.
func Test015NeverAnswersAnEmptyBatchAck(t *testing.T) {
	t.Parallel()
	srv, _ := start015(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/api/v1/ack/batch", strings.NewReader(`{"acknowledgments":[]}`))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("an empty batch was answered %d", resp.StatusCode)
	}
}
