package acceptance

import (
	"net/http"
	"testing"
)

// An integer parameter is an optional "-" and decimal digits, nothing else.
func TestIntegerSyntax(t *testing.T) {
	b := start(t)
	b.pushN("q", "p", 1)
	for _, v := range []string{"%2B5", "+5", "0x10", "1_0", "5%20", "1e2", "%EF%BC%95"} {
		t.Run(v, func(t *testing.T) {
			b := b.at(t)
			for _, p := range []string{
				"/api/v1/pop/queue/q?batch=", "/api/v1/pop/queue/q?partitions=", "/api/v1/pop/queue/q?timeout=",
				"/api/v1/pop/queue/q?leaseSeconds=", "/api/v1/dlq?limit=", "/api/v1/dlq?offset=",
				"/api/v1/status/queues?limit=", "/api/v1/status/queues?offset=", "/api/v1/consumer-groups/lagging?minLagSeconds=",
				"/api/v1/messages?queue=q&limit=", "/api/v1/messages?queue=q&partition=p&fromOffset=",
			} {
				b.get(p + v).fails(http.StatusBadRequest)
			}
		})
	}
	// An empty first value takes the default, whatever follows.
	if n := len(msgs(t, b.pop("/api/v1/pop/queue/q?batch=&batch=abc&autoAck=&autoAck=maybe"))); n != 1 {
		t.Fatalf("%d messages", n)
	}
	// -0 is the integer 0.
	b.get("/api/v1/pop/queue/q?batch=-0").fails(http.StatusBadRequest, "batch")
	eq(t, b.get("/api/v1/dlq?offset=-0").obj(http.StatusOK), "total", 0)
}

// TestHeadIsNotAPop: HEAD is not a served method on the pop routes: it leases nothing.
func TestHeadIsNotAPop(t *testing.T) {
	b := start(t)
	b.pushN("q", "p", 1)
	r := b.do("HEAD", "/api/v1/pop/queue/q", nil)
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("HEAD pop: status %d, want 405", r.status)
	}
	wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q")), 0)
	eq(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all"))[0], "deliveryAttempt", 1)
}
