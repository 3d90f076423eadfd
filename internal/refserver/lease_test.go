package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/internal/wire"
)

// A push-created queue leases for 60 s; a configured leaseTime 0 also means 60 s.
func TestALeaseLasts60SecondsByDefault(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"zero","options":{"leaseTime":0}}`).Want(t, http.StatusOK, nil)
	for _, queue := range []string{"pushed", "zero"} {
		c.Push(testutil.Item{Queue: queue})
	}
	for _, queue := range []string{"pushed", "zero"} {
		c.MustPop("/api/v1/pop/queue/"+queue, nil)
	}
	srv.Advance(59 * time.Second)
	for _, queue := range []string{"pushed", "zero"} {
		if c.Pop("/api/v1/pop/queue/"+queue, nil) != nil {
			t.Errorf("%s: the lease ended before 60 s", queue)
		}
	}
	srv.Advance(time.Second)
	for _, queue := range []string{"pushed", "zero"} {
		if c.Pop("/api/v1/pop/queue/"+queue, nil) == nil {
			t.Errorf("%s: the lease outlived 60 s", queue)
		}
	}
}

// A lease expires with the broker clock; the batch comes back with
// deliveryAttempt 2, and the old lease's acks are refused.
func TestAnExpiredLeaseRedeliversItsMessages(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.PushN("exp", "", "e", 2)
	first := c.MustPop("/api/v1/pop/queue/exp", testutil.Query("batch", "2", "leaseSeconds", "10"))
	srv.Advance(9 * time.Second)
	if c.Pop("/api/v1/pop/queue/exp", nil) != nil {
		t.Fatal("the lease ended before its 10 s")
	}
	srv.Advance(time.Second)
	second := c.MustPop("/api/v1/pop/queue/exp", testutil.Query("batch", "2"))
	if second.Messages[0].DeliveryAttempt != 2 || second.Messages[0].Offset != 0 || second.LeaseID == first.LeaseID {
		t.Fatalf("redelivery %+v, want offset 0 with deliveryAttempt 2 under a new lease", second.Messages[0])
	}
	var acks []testutil.AckResult
	c.Post("/api/v1/ack", map[string]any{"transactionId": first.Messages[0].TransactionID, "partitionId": first.PartitionID,
		"leaseId": first.LeaseID}).Want(t, http.StatusOK, &acks)
	if acks[0].Success || testutil.Deref(acks[0].Error) != "Invalid or expired lease" {
		t.Fatalf("ack under the expired lease %+v", acks[0])
	}
	// The expired lease cannot be renewed.
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+first.LeaseID+"/extend", `{"seconds":5}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || ext[0].ExpiresAt != nil {
		t.Fatalf("extend of an expired lease %+v", ext[0])
	}
}

// Extend pushes the expiry to max(current, now+N), so the lease outlives its time.
func TestAnExtensionKeepsTheLease(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Push(testutil.Item{Queue: "ext"})
	res := c.MustPop("/api/v1/pop/queue/ext", testutil.Query("leaseSeconds", "10"))
	srv.Advance(8 * time.Second)
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":10}`).Want(t, http.StatusOK, &ext)
	want := srv.Now().Add(10 * time.Second).UTC().Format(wire.TimeLayout)
	if !ext[0].Success || testutil.Deref(ext[0].ExpiresAt) != want {
		t.Fatalf("extend %+v, want expiresAt %s", ext[0], want)
	}
	srv.Advance(9 * time.Second)
	if c.Pop("/api/v1/pop/queue/ext", nil) != nil {
		t.Fatal("the extended lease expired early")
	}
	c.AckAll(res, "", "completed")
}
