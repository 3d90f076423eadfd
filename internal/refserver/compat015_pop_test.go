package refserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// No offset or deliveryAttempt; leaseSeconds and autopilot ignored, batch defaults to 1.
func Test015PopIgnoresLeaseSecondsAndAutopilot(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b", "c")
	r := c.Get("/api/v1/pop/queue/q?consumerGroup=g&autopilot=true&leaseSeconds=5&subscriptionMode=all")
	if strings.Contains(string(r.Body), `"offset"`) || strings.Contains(string(r.Body), `"deliveryAttempt"`) {
		t.Fatalf("0.15 sends no offset or deliveryAttempt: %s", r.Body)
	}
	var res testutil.PopResult
	r.Want(t, http.StatusOK, &res)
	if len(res.Messages) != 1 {
		t.Fatalf("autopilot with no batch leased %d messages, want 1", len(res.Messages))
	}
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	exp, err := time.Parse(time.RFC3339, *ext[0].ExpiresAt)
	if err != nil || time.Until(exp) < 250*time.Second {
		t.Fatalf("the lease is the queue's 300 s leaseTime, not leaseSeconds=5: expires %v (%v)", exp, err)
	}
}

// Lax parameters: an unparsable integer takes its default, a boolean other than true/1
// is false; nothing is refused.
func Test015ReadsPopParametersLaxly(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "", "a", "b")
	ids, _ := c.Pop("/api/v1/pop/queue/q", testutil.Query("batch", "many", "wait", "yes", "timeout", "-5", "partitions", "999"))
	wantIDs(t, "batch=many", ids, "a")
}

// With no mode, or new-only, a group reads the history; "new" skips it.
func Test015DefaultStartIsAll(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Push("q", "p", "a", "b")
	for _, mode := range []string{"", "new-only", "all"} {
		ids, _ := c.Pop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "g"+mode, "batch", "10", "subscriptionMode", mode))
		wantIDs(t, "mode "+mode, ids, "a", "b")
	}
	ids, res := c.Pop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "gnew", "batch", "10", "subscriptionMode", "new"))
	wantIDs(t, "mode new", ids)
	if !res.Success || res.LeaseID == "" || res.Partition != "p" {
		t.Fatalf("a new group's first pop claims the partition with nothing in it: %+v", res)
	}
}

// A "new" start is recorded only when a pop finds a partition with a message: a group
// whose first pops found the queue empty skips what was pushed before its next pop.
func Test015KeepsANewStartOnlyOnceAPopClaims(t *testing.T) {
	t.Parallel()
	_, c := start015(t)
	c.Post("/api/v1/configure", `{"queue":"q"}`).Want(t, http.StatusOK, nil)
	newPop := testutil.Query("consumerGroup", "g", "batch", "10", "subscriptionMode", "new")
	ids, _ := c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "empty queue", ids)
	c.Push("q", "p", "m1", "m2", "m3")
	ids, _ = c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "after the push", ids) // 2.0 would deliver m1..m3
	c.Push("q", "p", "m4")
	ids, _ = c.Pop("/api/v1/pop/queue/q", newPop)
	wantIDs(t, "once the start is stored", ids, "m4")
}
