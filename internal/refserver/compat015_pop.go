package refserver

// A pop on 0.15. What differs from 2.0: parameters are read laxly (leaseSeconds, autopilot
// and conflation are ignored, batch defaults to 1, what does not parse takes its default, the
// default start is "all"); every answer is a 200, an empty pop saying why in its body; no
// message carries an offset or a delivery attempt; a long poll's timeout has no cap but an
// hour; there is no discovery pop.

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handlePop015 is a pop as 0.15 serves it: lax parameters, every answer a 200, and an empty
// pop told by its body.
func (s *Server) handlePop015(w http.ResponseWriter, r *http.Request) {
	req := popTarget(r)
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	parsePopRequest015(q, &req)
	res, err := s.engine.Pop(r.Context(), req)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return // the client left; the engine leased nothing
		}
		writeFailure015(w, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, popAnswer015(&req, &res))
}

// popTimeoutCap015 bounds a long poll; 0.15 caps none, but a wait must end.
const popTimeoutCap015 = time.Hour

// parsePopRequest015 reads the pop parameters as 0.15 does: leaseSeconds,
// autopilot and conflation are ignored; batch defaults to 1; an unparsable integer takes its
// default and a boolean is true only for true or 1; the default start is "all", and a mode
// other than "new" (new-only included) means "all"; an unparsable subscriptionFrom is ignored.
func parsePopRequest015(q query, req *broker.PopRequest) {
	req.Group = q.get("consumerGroup")
	req.Batch = int(max(q.laxInt("batch", 1), 1))
	req.Partitions = int(min(max(q.laxInt("partitions", 1), 1), maxInt32))
	timeout := q.laxInt("timeout", 30000)
	if timeout < 0 {
		timeout = 30000
	}
	req.Timeout = time.Duration(min(timeout, popTimeoutCap015.Milliseconds())) * time.Millisecond
	req.Wait, req.AutoAck = q.laxBool("wait", false), q.laxBool("autoAck", false)
	req.SubscriptionMode = "all"
	if q.get("subscriptionMode") == "new" {
		req.SubscriptionMode = "new"
	}
	switch from := q.get("subscriptionFrom"); from {
	case "":
	case "now":
		req.FromNow = true
	default:
		if t, err := parseTime(from); err == nil {
			req.SubscriptionFrom = &t
		}
	}
}

// laxInt reads an integer parameter as 0.15 does: an absent or unparsable one is def.
func (q query) laxInt(name string, def int64) int64 {
	if n, ok := parseInteger(q.get(name)); ok {
		return n
	}
	return def
}

// laxBool reads a boolean parameter as 0.15 does: true only for true or 1.
func (q query) laxBool(name string, def bool) bool {
	switch q.get(name) {
	case "":
		return def
	case "true", "1":
		return true
	}
	return false
}

// popAnswer015 is the body 0.15 answers a pop with: its messages, a claimed partition with
// nothing new, the empty answer of a long poll, or the reason it found nothing.
func popAnswer015(req *broker.PopRequest, res *broker.PopResult) any {
	group := groupName(res.ConsumerGroup)
	msgs := make([]wire.Message015, len(res.Messages))
	for i := range res.Messages {
		m := &res.Messages[i]
		msgs[i] = wire.Message015{
			ConsumerGroup: group, CreatedAt: wire.At(m.CreatedAt), Data: dataOr(m.Data, "null"), ID: m.ID,
			LeaseID: m.LeaseID, Partition: m.Partition, PartitionID: m.PartitionID,
			TraceID: nullable(m.TraceID), TransactionID: m.TransactionID,
		}
	}
	switch {
	case len(msgs) > 0 || res.Empty == broker.EmptyClaimed:
		lease, pid := res.LeaseID, res.PartitionID
		return wire.Pop015{
			ConsumerGroup: group, LeaseID: &lease, Messages: msgs, Partition: res.Partition,
			PartitionID: &pid, PartitionsClaimed: res.PartitionsClaimed, Queue: req.Queue, Success: true,
		}
	case req.Wait:
		return wire.Pop015{ConsumerGroup: group, Messages: msgs, Partition: req.Partition, Queue: req.Queue, Success: true}
	case res.Empty == broker.EmptyLeaseHeld:
		return wire.PopRefusal015{Error: "lease_held", Messages: msgs}
	case res.Empty == broker.EmptyPartitionNotFound:
		return wire.PopRefusal015{Error: "partition_not_found", Messages: msgs}
	}
	return wire.PopRefusal015{Error: "no_available_partition", Messages: msgs}
}
