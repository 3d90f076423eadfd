package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Black-box checks of SPEC rules an outside tester reads literally: raw requests, exact
// statuses, key sets and error texts.

// R127: when several operations would fail, the rollback names the first in request order,
// whether it is a refused ack or an invalid push item; nothing is stored either way (R126).
func TestTransaction_RollbackNamesFirstFailingOperation_R126_R127(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	cases := []struct{ body, want string }{
		{`{"operations":[{"type":"ack","transactionId":"t","partitionId":"p"},{"type":"push","items":[{"queue":5}]}]}`,
			"operation 0: Message not found"},
		{`{"operations":[{"type":"bogus"},{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":[{"queue":5}]}]}`,
			`operation 0: `},
		{`{"operations":[{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":[{"queue":5}]},{"type":"bogus"}]}`,
			"operation 1: Queue must be a string"},
		{`{"operations":[{"type":"push","items":[{"queue":"txq"}]},{"type":"push","items":"x"}]}`,
			"operation 1: items array is required"},
	}
	for _, tc := range cases {
		var out map[string]any
		c.Post("/api/v1/transaction", tc.body).Want(t, http.StatusOK, &out)
		testutil.WantKeys(t, "rollback", out, "transactionId", "success", "error", "results")
		msg, _ := out["error"].(string)
		if out["success"] != false || len(msg) < len(tc.want) || msg[:len(tc.want)] != tc.want {
			t.Errorf("%s\n  answered %v, want an error starting %q", tc.body, out, tc.want)
		}
		if res, ok := out["results"].([]any); !ok || len(res) != 0 {
			t.Errorf("rollback results %v, want []", out["results"])
		}
	}
	// R126: no queue was created by the rolled-back pushes.
	c.Delete("/api/v1/resources/queues/txq").WantError(t, http.StatusNotFound, "queue not found")
}

// R36, R22: an empty discovery pop of a group stored as conflating answers 200
// {"messages":[]}, as a queue pop of that group does; another group gets 204.
func TestPop_DiscoveryEmptyForConflatingGroup_R22_R36(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"conf-disc","namespace":"cd"}`).Want(t, http.StatusOK, nil)
	r := c.Get("/api/v1/pop/queue/conf-disc?consumerGroup=cg&conflation=true")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("queue pop: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=cd&consumerGroup=cg")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("discovery pop of the conflating group: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=cd&consumerGroup=plain")
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("discovery pop of a plain group: %d %s, want 204", r.Status, r.Body)
	}
	r = c.Get("/api/v1/pop?namespace=none&consumerGroup=fresh&conflation=true")
	if r.Status != http.StatusOK || string(r.Body) != `{"messages":[]}` {
		t.Fatalf("discovery pop matching no queue with conflation=true: %d %s, want 200 {\"messages\":[]}", r.Status, r.Body)
	}
}

// R31, R35, R39: an integer is an optional '-' and decimal digits, however many; a batch or
// leaseSeconds beyond 64 bits is a positive integer, so it is served, not refused.
func TestPop_IntegersBeyond64Bits_R31_R35_R39(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.PushN("bignum", "", "b", 2)
	res := c.MustPop("/api/v1/pop/queue/bignum", testutil.Query("batch", "99999999999999999999", "leaseSeconds", "99999999999999999999"))
	if len(res.Messages) != 2 {
		t.Fatalf("a huge batch returned %d messages, want the 2 available", len(res.Messages))
	}
	c.Get("/api/v1/pop/queue/bignum?batch=-99999999999999999999").WantError(t, http.StatusBadRequest, "batch must be a positive integer")
	c.Get("/api/v1/pop/queue/bignum?partitions=99999999999999999999").WantError(t, http.StatusBadRequest, "partitions")
	c.Get("/api/v1/pop/queue/bignum?timeout=99999999999999999999").WantError(t, http.StatusBadRequest, "timeout")
}

// §2.2, R133, R172: group deletion and the group reads share a path; other methods there are 405.
func TestRoutes_GroupPathMethods_R133_R172(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	r := c.Do("POST", "/api/v1/consumer-groups/g1", "")
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "DELETE, GET, HEAD" {
		t.Errorf("POST /api/v1/consumer-groups/g1: %d Allow %q, want 405 Allow DELETE, GET, HEAD", r.Status, r.Header.Get("Allow"))
	}
	r = c.Do("POST", "/api/v1/consumer-groups/lagging", "{}")
	if r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/v1/consumer-groups/lagging: %d, want 405", r.Status)
	}
}

// R102, R103, R45: a named group's first pop decides its start even when the queue does not
// exist yet; the decision takes effect once a push creates the queue, and "new" counts from
// that first pop's arrival, so the first message pushed is delivered. The pop creates nothing.
func TestSubscription_FirstPopBeforeQueueExists_R45_R102_R103(t *testing.T) {
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

// R22, R59: a discovery pop never long-polls, ignores autopilot (batch 1), claims partitions
// of one queue only, and its lease lasts 60 s whatever the queue's leaseTime, or leaseSeconds.
func TestPop_DiscoveryLeaseAndScope_R22_R59(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withManualClock())
	c.Post("/api/v1/configure", `{"queue":"dq1","task":"mail","options":{"leaseTime":5}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"dq2","task":"mail","options":{"leaseTime":5}}`).Want(t, http.StatusOK, nil)
	if r := c.Get("/api/v1/pop?task=mail&wait=true&timeout=60000"); r.Status != http.StatusNoContent || srv.WaitingPops() != 0 {
		t.Fatalf("empty discovery pop with wait=true: %d, %d waiting; want 204 at once", r.Status, srv.WaitingPops())
	}
	c.PushN("dq1", "a", "x", 2)
	c.PushN("dq1", "b", "y", 2)
	c.PushN("dq2", "", "z", 2)

	res := c.MustPop("/api/v1/pop", testutil.Query("task", "mail", "autopilot", "true"))
	if len(res.Messages) != 1 || res.Queue != "dq1" {
		t.Fatalf("autopilot discovery pop: %d messages from %q, want 1 (batch 1) from dq1", len(res.Messages), res.Queue)
	}
	srv.Advance(59 * time.Second)
	var ext []testutil.ExtendResult
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if !ext[0].Success {
		t.Fatalf("the discovery lease ended before 60 s: %+v", ext[0])
	}
	srv.Advance(time.Second)
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success || testutil.Deref(ext[0].Error) != "Lease already expired" {
		t.Fatalf("the discovery lease outlived 60 s: %+v", ext[0])
	}

	res = c.MustPop("/api/v1/pop", testutil.Query("task", "mail", "partitions", "3", "batch", "10", "leaseSeconds", "7"))
	for _, m := range res.Messages {
		if res.Queue != "dq1" || m.Partition == "Default" {
			t.Fatalf("a discovery pop claimed %q/%q; want only dq1's partitions", res.Queue, m.Partition)
		}
	}
	if len(res.Messages) != 4 || res.PartitionsClaimed != 2 {
		t.Fatalf("got %d messages from %d partitions, want dq1's 4 from 2", len(res.Messages), res.PartitionsClaimed)
	}
	srv.Advance(7 * time.Second)
	c.Post("/api/v1/lease/"+res.LeaseID+"/extend", `{"seconds":1}`).Want(t, http.StatusOK, &ext)
	if ext[0].Success {
		t.Fatal("leaseSeconds=7 did not set the discovery lease")
	}
}

// §2.3, R76: an ack result's queueName and partitionName name the partition its partitionId
// identifies, whichever check refuses the item; they are null only for an unknown partition.
func TestAck_ResultNamesThePartitionWhenRefused_R76(t *testing.T) {
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
