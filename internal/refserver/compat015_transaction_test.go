package refserver

import (
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// In a transaction a failed files at once, and a retry or a duplicate push rolls back.
func Test015Transactions(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b")
	_, res := c.Pop("/api/v1/pop/queue/q", testutil.Query("batch", "10"))
	m := res.Messages[0]
	op := func(status string) string {
		return `{"operations":[{"type":"ack","transactionId":"` + m.TransactionID + `","partitionId":"` + m.PartitionID + `","leaseId":"` + m.LeaseID + `","status":"` + status + `"}]}`
	}
	var out map[string]any
	c.Post("/api/v1/transaction", op("retry")).Want(t, http.StatusOK, &out)
	if out["success"] != false || out["error"] == nil || out["transactionId"] == nil || len(out["results"].([]any)) != 0 || len(out) != 4 {
		t.Fatalf("retry rolls back as {error, results:[], success:false, transactionId}: %v", out)
	}
	c.Post("/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"q","partition":"p","transactionId":"a"}]}]}`).Want(t, http.StatusOK, &out)
	if out["success"] != false {
		t.Fatalf("a duplicate push rolls back: %v", out)
	}
	c.Post("/api/v1/transaction", op("failed")).Want(t, http.StatusOK, &out)
	if entry := out["results"].([]any)[0].(map[string]any); entry["dlq"] != true {
		t.Fatalf("a failed in a transaction files at once (retryLimit 3): %v", out)
	}
}
