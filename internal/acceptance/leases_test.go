package acceptance

import (
	"net/http"
	"testing"
	"time"
)

var extendKeys = []string{"index", "leaseId", "success", "error", "expiresAt"}

func (b *broker) extend(lease string, body any) obj {
	b.t.Helper()
	res := b.post("/api/v1/lease/"+lease+"/extend", body).arr(http.StatusOK)
	if len(res) != 1 {
		b.t.Fatalf("extend: %d results, want 1", len(res))
	}
	hasKeys(b.t, res[0], extendKeys...)
	eq(b.t, res[0], "index", 0)
	eq(b.t, res[0], "leaseId", lease)
	return res[0]
}

func TestLeases(t *testing.T) {
	t.Parallel()
	t.Run("expiry_redelivers_without_budget", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 2)
		for i := 1; i <= 4; i++ {
			ms := msgs(t, b.pop("/api/v1/pop/queue/q?batch=5"))
			if got := attempts(t, ms); got[0] != i || got[1] != i {
				t.Fatalf("delivery %d: deliveryAttempt %v", i, got)
			}
			b.get("/api/v1/pop/queue/q").empty()
			b.advance(59 * time.Second)
			b.get("/api/v1/pop/queue/q").empty()
			b.advance(time.Second) // The push-created... configured queue's default 60 s
		}
		d := b.get("/api/v1/dlq?queue=q").obj(http.StatusOK)
		eq(t, d, "total", 0) // Expiry never files
	})
	t.Run("attempts_per_group", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q?consumerGroup=a&subscriptionMode=all")
		b.advance(61 * time.Second)
		eq(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=a"))[0], "deliveryAttempt", 2)
		eq(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=b&subscriptionMode=all"))[0], "deliveryAttempt", 1)
	})
	t.Run("lease_durations", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"leaseTime": 0}}).obj(http.StatusOK)
		b.pushN("q", "p", 1)
		b.pop("/api/v1/pop/queue/q")
		b.advance(59 * time.Second)
		b.get("/api/v1/pop/queue/q").empty()
		b.advance(time.Second)
		b.pop("/api/v1/pop/queue/q?leaseSeconds=5")
		b.advance(4 * time.Second)
		b.get("/api/v1/pop/queue/q").empty()
		b.advance(time.Second)
		b.pop("/api/v1/pop/queue/q")
	})
	t.Run("extend_never_shortens_covers_all", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 1)
		b.advance(time.Millisecond)
		b.pushN("q", "b", 1)
		p := b.pop("/api/v1/pop/queue/q?batch=5&partitions=2&leaseSeconds=100")
		lease := str(t, p, "leaseId")
		r := b.extend(lease, obj{"seconds": 10})
		eq(t, r, "success", true)
		eq(t, r, "error", nil)
		exp := isTime(t, r, "expiresAt")
		r = b.extend(lease, obj{"seconds": 300})
		if !isTime(t, r, "expiresAt").After(exp) {
			t.Fatal("a longer extend did not move the expiry")
		}
		b.advance(299 * time.Second)
		b.get("/api/v1/pop/queue/q").empty() // both partitions still held
		b.advance(2 * time.Second)
		if n := len(msgs(t, b.pop("/api/v1/pop/queue/q?batch=5&partitions=2"))); n != 2 {
			t.Fatalf("%d messages after expiry, want 2", n)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		b := start(t)
		refused := func(r obj, msg string) {
			t.Helper()
			eq(t, r, "success", false)
			eq(t, r, "error", msg)
			eq(t, r, "expiresAt", nil)
		}
		refused(b.extend("unknown-lease", obj{"seconds": 5}), "Lease not found")
		_, ms := b.leased("q", "p", "", 1)
		lease := ms[0]["leaseId"].(string)
		b.advance(61 * time.Second)
		refused(b.extend(lease, obj{"seconds": 5}), "Lease already expired")
		_, ms = b.leased("q", "r", "", 1)
		lease = ms[0]["leaseId"].(string)
		b.ackMsg(ms[0], "completed", false)
		refused(b.extend(lease, obj{}), "Lease not found")
	})
	t.Run("expiry_observed_before_timer", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 1)
		// Advance fires timers; even so, the answer must read as an expiry, not a release.
		b.advance(120 * time.Second)
		eq(t, b.extend(ms[0]["leaseId"].(string), obj{"seconds": 5}), "error", "Lease already expired")
	})
	t.Run("body_rules", func(t *testing.T) {
		b := start(t)
		_, ms := b.leased("q", "p", "", 1)
		lease := ms[0]["leaseId"].(string)
		r := b.extend(lease, obj{})
		eq(t, r, "success", true)
		for name, body := range map[string]string{
			"string":   `{"seconds":"5"}`,
			"fraction": `{"seconds":1.5}`,
			"zero":     `{"seconds":0}`,
			"negative": `{"seconds":-1}`,
			"empty":    ``,
			"bad json": `{"seconds":`,
			"array":    `[]`,
		} {
			t.Run(name, func(t *testing.T) {
				b.at(t).post("/api/v1/lease/"+lease+"/extend", body).fails(http.StatusBadRequest)
			})
		}
		// {} means 60 s from now (an extension never shortens a lease, here of 60 s).
		b.advance(59 * time.Second)
		b.get("/api/v1/pop/queue/q").empty()
	})
}
