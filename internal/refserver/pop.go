package refserver

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handlePop answers a pop of a queue, or of one of its partitions.
func (s *Server) handlePop(w http.ResponseWriter, r *http.Request) {
	s.pop(w, r, popTarget(r))
}

// handlePopDiscovery answers a pop by namespace and task.
func (s *Server) handlePopDiscovery(w http.ResponseWriter, r *http.Request) {
	s.pop(w, r, broker.PopRequest{Discovery: true})
}

// popTarget is the queue, and the partition if any, a pop's path names.
func popTarget(r *http.Request) broker.PopRequest {
	return broker.PopRequest{Queue: r.PathValue("queue"), Partition: r.PathValue("partition")}
}

func (s *Server) pop(w http.ResponseWriter, r *http.Request, req broker.PopRequest) {
	q, err := parseQuery(r)
	if err == nil {
		err = parsePopRequest(q, &req)
	}
	if err != nil {
		writeFailure(w, err)
		return
	}
	res, err := s.engine.Pop(r.Context(), req)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return // the client left; the engine leased nothing
		}
		writeFailure(w, err)
		return
	}
	switch {
	case len(res.Messages) > 0:
		writePopAnswer(w, &res)
	case res.ConflatingEmpty:
		writeJSON(w, http.StatusOK, wire.PopAnswer{Messages: []wire.Message{}})
	default:
		writeNoContent(w)
	}
}

// parsePopRequest validates every pop parameter on every pop route, whether or not it
// has an effect there.
func parsePopRequest(q query, req *broker.PopRequest) error {
	if req.Discovery {
		req.Namespace, req.Task = q.get("namespace"), q.get("task")
		if req.Namespace == "" && req.Task == "" { // a discovery pop needs a label to look by
			return badRequest("namespace or task is required for a discovery pop")
		}
	} else if req.Queue == "" {
		return badRequest("queue is required")
	} else if err := checkName("queue", req.Queue); err != nil {
		return err
	} else if err := checkOptionalName("partition", req.Partition); err != nil {
		return err
	}
	req.Group = q.get("consumerGroup")
	if err := checkOptionalName("consumerGroup", req.Group); err != nil {
		return err
	}
	batch, err := q.intIn("batch", 1, maxInt, 0, "must be a positive integer")
	if err != nil {
		return err
	}
	partitions, err := q.intIn("partitions", 1, 64, 0, "must be an integer from 1 to 64")
	if err != nil {
		return err
	}
	timeout, err := q.intIn("timeout", 0, 60000, 30000, "must be an integer from 0 to 60000 (milliseconds)")
	if err != nil {
		return err
	}
	lease, err := q.intIn("leaseSeconds", 1, maxInt, 0, "must be a positive integer")
	if err != nil {
		return err
	}
	lease = min(lease, maxLeaseSeconds)
	req.Batch, req.Partitions, req.LeaseSeconds = int(batch), int(partitions), int(lease)
	req.Timeout = time.Duration(timeout) * time.Millisecond
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"wait", &req.Wait}, {"autoAck", &req.AutoAck}, {"autopilot", &req.Autopilot}, {"conflation", &req.Conflation}} {
		if *b.dst, err = q.boolean(b.name, false); err != nil {
			return err
		}
	}
	switch mode := q.get("subscriptionMode"); mode {
	case "", "new", "all":
		req.SubscriptionMode = mode
	default: // new-only included
		return badRequest("subscriptionMode must be new or all, got %q", mode)
	}
	if q.get("subscriptionFrom") == "now" {
		req.FromNow = true
	} else {
		from, ok, err := q.timestamp("subscriptionFrom")
		if err != nil {
			return err
		}
		if ok {
			req.SubscriptionFrom = &from
		}
	}
	return nil
}

// maxLeaseSeconds is the longest lease a time.Duration holds (about 292 years); a longer
// leaseSeconds is still a positive integer, so it is clamped rather than refused.
const maxLeaseSeconds = int64(math.MaxInt64 / int64(time.Second))

// popMessages are reused for the messages of pop answers: a busy broker writes one per pop.
var popMessages = sync.Pool{New: func() any { return new([]wire.Message) }}

// maxPooledMessages is the most messages a reused slice keeps room for.
const maxPooledMessages = 1000

// writePopAnswer answers a pop with what it leased, its messages built in a reused slice.
func writePopAnswer(w http.ResponseWriter, res *broker.PopResult) {
	msgs := popMessages.Get().(*[]wire.Message)
	answer := popAnswer(res, (*msgs)[:0])
	writeAppended(w, http.StatusOK, func(dst []byte) ([]byte, error) { return wire.AppendPopAnswer(dst, &answer) })
	if cap(answer.Messages) <= maxPooledMessages { // do not keep a huge batch's slice alive
		clear(answer.Messages) // let go of the batch's data
		*msgs = answer.Messages[:0]
		popMessages.Put(msgs)
	}
}

// popAnswer is the pop result, its messages appended to msgs. The group is named in full,
// __QUEUE_MODE__ included.
func popAnswer(res *broker.PopResult, msgs []wire.Message) wire.PopAnswer {
	group := groupName(res.ConsumerGroup)
	// Every message's createdAt, written into one string: one allocation for the batch.
	times := make([]byte, 0, len(res.Messages)*len(wire.TimeLayout))
	ends := make([]int, len(res.Messages))
	for i := range res.Messages {
		times = res.Messages[i].CreatedAt.UTC().AppendFormat(times, wire.TimeLayout)
		ends[i] = len(times)
	}
	allTimes, start := string(times), 0
	for i := range res.Messages {
		m := &res.Messages[i]
		mg := m.ConsumerGroup
		if mg == "" {
			mg = group
		}
		msgs = append(msgs, wire.Message{ID: m.ID, TransactionID: m.TransactionID, TraceID: nullable(m.TraceID),
			Data: dataOr(m.Data, "{}"), CreatedAt: allTimes[start:ends[i]], PartitionID: m.PartitionID,
			Partition: m.Partition, LeaseID: m.LeaseID, ConsumerGroup: mg,
			Offset: &m.Offset, DeliveryAttempt: &m.DeliveryAttempt})
		start = ends[i]
	}
	return wire.PopAnswer{Success: new(true), Queue: res.Queue, Partition: res.Partition,
		PartitionID: &res.PartitionID, LeaseID: &res.LeaseID, ConsumerGroup: group,
		PartitionsClaimed: res.PartitionsClaimed, Messages: msgs}
}
