package acceptance

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

var seekKeys = []string{"success", "consumerGroup", "queueName", "seekToEnd", "targetTimestamp", "partitionsUpdated"}

func (b *broker) seek(g, q string, body any) reply {
	b.t.Helper()
	return b.post("/api/v1/consumer-groups/"+g+"/queues/"+q+"/seek", body)
}

func TestStart(t *testing.T) {
	t.Parallel()
	t.Run("default_new", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
		b.advance(time.Second)
		b.push(item("q", "p", "later", 1))
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=10&subscriptionMode=all"))
		wantOffsets(t, ms, 2) // The later all changes nothing
	})
	t.Run("first_pop_of_missing_queue_decides_new", func(t *testing.T) {
		b := start(t)
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty()
		b.advance(time.Second)
		b.pushN("q", "p", 1)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g")), 0)
	})
	t.Run("refused_pop_decides_nothing", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		b.get("/api/v1/pop/queue/q?consumerGroup=g&batch=0").fails(http.StatusBadRequest)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")), 0)
	})
	t.Run("all_covers_later_partitions", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 1)
		b.pop("/api/v1/pop/queue/q/partition/a?consumerGroup=g&subscriptionMode=all")
		b.pushN("q", "b", 2)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q/partition/b?consumerGroup=g&batch=5&subscriptionMode=new")), 0, 1)
	})
	t.Run("subscriptionFrom", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		b.advance(time.Second)
		res := b.push(item("q", "p", "x", 1), item("q", "p", "y", 2))
		_ = res
		at := msgs(t, b.pop("/api/v1/pop/queue/q?batch=10&autoAck=true"))[2]["createdAt"].(string)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=10&subscriptionMode=all&subscriptionFrom="+url.QueryEscape(at)))
		wantOffsets(t, ms, 2, 3)
		// A numeric offset is a valid read timestamp (%2B for +).
		ts, _ := time.Parse(time.RFC3339Nano, at)
		off := ts.In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05.999999-07:00")
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=h&batch=10&subscriptionFrom="+url.QueryEscape(off))), 2, 3)
		b.get("/api/v1/pop/queue/q?consumerGroup=n&subscriptionFrom=now").empty()
	})
	t.Run("queue_mode_ignores_start", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?batch=5&subscriptionMode=new&subscriptionFrom=now")), 0, 1)
	})
}

func TestSeek(t *testing.T) {
	t.Parallel()
	t.Run("timestamp_and_shape", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "a", 2)
		b.pushN("q", "b", 1)
		b.advance(time.Second)
		b.push(item("q", "a", "late", 1))
		all := msgs(t, b.pop("/api/v1/pop/queue/q/partition/a?batch=10&consumerGroup=g&subscriptionMode=all"))
		b.ackMsg(all[2], "completed", false)
		at := all[2]["createdAt"].(string)
		r := b.seek("g", "q", obj{"timestamp": at}).obj(http.StatusOK)
		hasKeys(t, r, seekKeys...)
		eq(t, r, "success", true)
		eq(t, r, "consumerGroup", "g")
		eq(t, r, "queueName", "q")
		eq(t, r, "seekToEnd", false)
		eq(t, r, "targetTimestamp", at)
		eq(t, r, "partitionsUpdated", 2)
		ms := msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=10&partitions=5"))
		wantOffsets(t, ms, 2)
		eq(t, ms[0], "deliveryAttempt", 2) // a seek keeps counting deliveries
	})
	t.Run("seek_back_reads_everything", func(t *testing.T) {
		b := start(t)
		b.get("/api/v1/pop/queue/q?consumerGroup=g").empty() // start new
		b.advance(time.Second)
		b.pushN("q", "p", 2)
		b.seek("g", "q", obj{"timestamp": "2000-01-01T00:00:00+01:00"}).obj(http.StatusOK)
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=10")), 0, 1)
	})
	t.Run("toEnd_and_group_without_start", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 2)
		r := b.seek("fresh", "q", obj{"toEnd": true}).obj(http.StatusOK)
		eq(t, r, "seekToEnd", true)
		eq(t, r, "targetTimestamp", nil)
		eq(t, r, "partitionsUpdated", 1)
		b.get("/api/v1/pop/queue/q?consumerGroup=fresh&subscriptionMode=all").empty()
		b.push(item("q", "p", "after", 1))
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=fresh&batch=5")), 2)
	})
	t.Run("releases_leases_and_resets_retries", func(t *testing.T) {
		b := start(t)
		b.post("/api/v1/configure", obj{"queue": "q", "options": obj{"retryLimit": 1}}).obj(http.StatusOK)
		_, ms := b.leased("q", "p", "g", 2)
		b.ackMsg(ms[0], "failed", false)
		ms = msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5"))
		b.seek("g", "q", obj{"timestamp": "1970-01-01T00:00:00Z"}).obj(http.StatusOK)
		r := b.ackMsg(ms[0], "completed", false)
		eq(t, r, "success", false)
		eq(t, r, "error", "Invalid or expired lease")
		ms = msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&batch=5"))
		eq(t, ms[0], "deliveryAttempt", 3)
		eq(t, b.ackMsg(ms[0], "failed", false), "dlq", false) // the counter was reset
	})
	t.Run("body_rules", func(t *testing.T) {
		b := start(t)
		b.pushN("q", "p", 1)
		if msg := b.seek("g", "q", `{}`).fails(http.StatusBadRequest); msg != "Must specify either 'toEnd': true or 'timestamp'" {
			t.Errorf("neither: %q", msg)
		}
		b.seek("g", "q", `{"toEnd":false}`).fails(http.StatusBadRequest, "toEnd")
		for name, body := range map[string]string{
			"both":          `{"toEnd":true,"timestamp":"2026-01-01T00:00:00Z"}`,
			"bad timestamp": `{"timestamp":"yesterday"}`,
			"number":        `{"timestamp":5}`,
			"toEnd string":  `{"toEnd":"true"}`,
			"empty":         ``,
			"array":         `[]`,
		} {
			t.Run(name, func(t *testing.T) { b.at(t).seek("g", "q", body).fails(http.StatusBadRequest) })
		}
		b.seek("g", "nope", obj{"toEnd": true}).fails(http.StatusNotFound, "queue not found")
		// None of the refusals decided a start for g.
		wantOffsets(t, msgs(t, b.pop("/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=all")), 0)
	})
}

// TestSeekTargetIsWritten: targetTimestamp is a written timestamp: UTC, Z, microseconds.
func TestSeekTargetIsWritten(t *testing.T) {
	b := start(t)
	b.pushN("q", "p", 1)
	r := b.seek("g", "q", obj{"timestamp": "2026-01-01T01:00:00+01:00"}).obj(http.StatusOK)
	eq(t, r, "targetTimestamp", "2026-01-01T00:00:00.000000Z")
}
