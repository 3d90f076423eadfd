package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// A failed item is the stop of a batch ack; a refused status changes nothing.
func TestAFailedAckStopsTheBatchAboveIt(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("stop", "", "s", 3)
	res := c.MustPop("/api/v1/pop/queue/stop", testutil.Query("batch", "3"))
	m := res.Messages
	acks := c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": m[0].TransactionID, "partitionId": m[0].PartitionID, "leaseId": res.LeaseID, "status": "bogus"},
		map[string]any{"partitionId": m[0].PartitionID},
		map[string]any{"transactionId": m[0].TransactionID},
	}})
	wantErrs := []string{"Invalid status", "transactionId is required", "partitionId is required"}
	for i, a := range acks {
		if a.Success || testutil.Deref(a.Error) != wantErrs[i] {
			t.Errorf("item %d = %+v, want refused with %q", i, a, wantErrs[i])
		}
	}
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": m[2].TransactionID, "partitionId": m[2].PartitionID, "leaseId": res.LeaseID, "status": "completed"},
		map[string]any{"transactionId": m[1].TransactionID, "partitionId": m[1].PartitionID, "leaseId": res.LeaseID, "status": "failed", "error": "e"},
		map[string]any{"transactionId": m[0].TransactionID, "partitionId": m[0].PartitionID, "leaseId": res.LeaseID, "status": "success"},
	}})
	for i, a := range acks {
		if !a.Success {
			t.Errorf("item %d refused: %+v", i, a)
		}
	}
	again := c.MustPop("/api/v1/pop/queue/stop", testutil.Query("batch", "3"))
	if again.Messages[0].Offset != 1 || again.Messages[0].DeliveryAttempt != 2 || len(again.Messages) != 2 {
		t.Fatalf("after a stop at offset 1: %+v, want offsets 1 and 2 again", again.Messages)
	}
}

// An unfenced ack is accepted after the lease expired and releases the new holder's batch.
func TestAnAckWithoutALeaseIDCompletesTheMessage(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "fence", TransactionID: "f"})
	old := c.MustPop("/api/v1/pop/queue/fence", testutil.Query("leaseSeconds", "5"))
	srv.Advance(5 * time.Second)
	cur := c.MustPop("/api/v1/pop/queue/fence", nil)
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": "f", "partitionId": old.PartitionID}).Want(t, http.StatusOK, &acks)
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("unfenced ack %+v", acks[0])
	}
	c.Post("/api/v1/ack", map[string]any{"transactionId": "f", "partitionId": cur.PartitionID, "leaseId": cur.LeaseID}).Want(t, http.StatusOK, &acks)
	if acks[0].Success {
		t.Fatal("the released holder's fenced ack was accepted")
	}
}

// The last ack ends the lease; a repeat of it, and an extend of the lease, are refused.
func TestAnAckRepeatedAfterItsLeaseEndedSucceedsUnchanged(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("rep", "", "r", 2)
	res := c.MustPop("/api/v1/pop/queue/rep", testutil.Query("batch", "2"))
	last := res.Messages[1]
	ack := map[string]any{"transactionId": last.TransactionID, "partitionId": last.PartitionID, "leaseId": res.LeaseID}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", ack).Want(t, http.StatusOK, &acks)
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("ack of the batch end %+v, want leaseReleased", acks[0])
	}
	c.Post("/api/v1/ack", ack).Want(t, http.StatusOK, &acks)
	if acks[0].Success || testutil.Deref(acks[0].Error) != "Invalid or expired lease" {
		t.Fatalf("repeated ack %+v", acks[0])
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":10}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || testutil.Deref(ext[0].Error) != "Lease not found" {
		t.Fatalf("extend of a released lease %+v", ext[0])
	}
	if c.Pop("/api/v1/pop/queue/rep", nil) != nil {
		t.Fatal("completed messages came back")
	}
}

// Acks at or below the cursor succeed and change nothing; acks outside the
// leased batch, or of messages never delivered to the group, are refused.
func TestAckRefusalsAndAcksOfFinishedMessages(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("ref", "", "x", 3)
	res := c.MustPop("/api/v1/pop/queue/ref", nil) // offset 0 only
	m0 := res.Messages[0]
	pid := m0.PartitionID
	acks := c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": "x-2", "partitionId": pid, "leaseId": res.LeaseID},
	}})
	if acks[0].Success || testutil.Deref(acks[0].Error) != "message not in leased batch" {
		t.Fatalf("ack outside the batch %+v", acks[0])
	}
	acks = c.AckBatch(map[string]any{"consumerGroup": "never", "acknowledgments": []any{
		map[string]any{"transactionId": "x-1", "partitionId": pid},
	}})
	if acks[0].Success || testutil.Deref(acks[0].Error) != "message not delivered to this group" {
		t.Fatalf("ack by a group that never popped %+v", acks[0])
	}
	c.AckAll(res, "", "completed")
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{map[string]any{"transactionId": m0.TransactionID, "partitionId": pid}}})
	if !acks[0].Success || acks[0].LeaseReleased {
		t.Fatalf("ack at the cursor %+v, want success and no change", acks[0])
	}
	if next := c.MustPop("/api/v1/pop/queue/ref", nil); next.Messages[0].Offset != 1 {
		t.Fatalf("next offset %d, want 1", next.Messages[0].Offset)
	}
}

// The batch's consumerGroup applies to every item; an item's own counts only without it.
func TestABatchGroupAppliesToEveryItem(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "prec", TransactionID: "p"})
	res := c.MustPop("/api/v1/pop/queue/prec", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
	m := res.Messages[0]
	acks := c.AckBatch(map[string]any{"consumerGroup": "other", "acknowledgments": []any{
		map[string]any{"transactionId": "p", "partitionId": m.PartitionID, "leaseId": res.LeaseID, "consumerGroup": "g"},
	}})
	if acks[0].Success {
		t.Fatal("the item's group overrode the batch's")
	}
	acks = c.AckBatch(map[string]any{"acknowledgments": []any{
		map[string]any{"transactionId": "p", "partitionId": m.PartitionID, "leaseId": res.LeaseID, "consumerGroup": "g"},
	}})
	if !acks[0].Success || !acks[0].LeaseReleased {
		t.Fatalf("the item's own group was not used: %+v", acks[0])
	}
}

// An empty acknowledgments array answers 200 [] at once.
func TestAnEmptyBatchAckAnswersAnEmptyArray(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	r := c.Post("/api/v1/ack/batch", `{"acknowledgments":[]}`)
	if r.Status != http.StatusOK || string(r.Body) != "[]" {
		t.Fatalf("got %d %s, want 200 []", r.Status, r.Body)
	}
}

// An ack result's queueName and partitionName name the partition its partitionId
// identifies, whichever check refuses the item; they are null only for an unknown partition.
func TestARefusedAckStillNamesItsPartition(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	pid := c.PushN("names", "p7", "n", 1)[0].PartitionID
	acks := c.AckBatch(`{"acknowledgments":[
		{"partitionId":"` + pid + `"},
		{"transactionId":"n-0","partitionId":"` + pid + `","status":"bogus"},
		{"transactionId":"nope","partitionId":"` + pid + `"},
		{"transactionId":"n-0","partitionId":"unknown"}]}`)
	wantErr := []string{"transactionId is required", "Invalid status", "Message not found", "Message not found"}
	for i, a := range acks {
		if a.Success || testutil.Deref(a.Error) != wantErr[i] {
			t.Errorf("item %d: %+v, want refused with %q", i, a, wantErr[i])
		}
		known := i < 3
		if known && (testutil.Deref(a.QueueName) != "names" || testutil.Deref(a.PartitionName) != "p7") {
			t.Errorf("item %d names %s/%s, want names/p7", i, testutil.Deref(a.QueueName), testutil.Deref(a.PartitionName))
		}
		if !known && (a.QueueName != nil || a.PartitionName != nil) {
			t.Errorf("item %d names %s/%s for an unknown partition, want null", i, testutil.Deref(a.QueueName), testutil.Deref(a.PartitionName))
		}
	}
}
