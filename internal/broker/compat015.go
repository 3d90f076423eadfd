package broker

import "github.com/google/uuid"

// v015 is a 0.15 broker. What differs from the 2.0 design:
//
//   - a queue a push creates, or a configure leaves without one, has a 300 s leaseTime and
//     deadLetterQueue false, which is ignored: given-up messages are filed all the same; a
//     queue a push creates is its own namespace;
//   - a pop's start is decided when it claims a partition, not when it arrives; an "all" start
//     is never stored, and a "new" or time start only once a pop finds a partition holding a
//     message: until then every pop decides afresh;
//   - the first pop of a "new" group that found nothing and waits is served by nothing
//     pushed during its wait: when the wait ends it decides its start after all of it;
//   - an empty pop says why: no partition was available, the group holds the partition, the
//     partition does not exist, or it claimed a partition with nothing new (a lease that holds
//     nothing);
//   - acks apply one by one in array order, a completed moving the cursor wherever its message
//     is, backwards or past a failed one; a lease ends once as many acks as it leased messages
//     have come; a failed of a group that never read the partition is filed at once;
//   - the retry counter is the (partition, group)'s: every failed adds one, whichever message
//     it names, and only a completed that finishes a leased batch resets it;
//   - a transaction files a failed at once, refuses a retry, and rolls back on a push whose
//     transactionId its partition holds;
//   - a seek moves only the partitions where the group has a cursor and releases their leases.
type v015 struct{ *Engine }

func (v015) defaultLease() int      { return leaseSeconds015 }
func (v015) dropsDeadLetters() bool { return false }

// deadLetterDefault: 0.15 stores deadLetterQueue false unless told otherwise, and says so
// when asked, though it files dead letters all the same.
func (v015) deadLetterDefault() bool { return false }

// createdNamespace: a queue a push creates on 0.15 is its own namespace.
func (v015) createdNamespace(queue string) string { return queue }

// arrival: 0.15 decides a start when a pop claims, so a waiting pop counts from now.
func (e v015) arrival(*waiter) int64 { return e.seq }

// noQueue: a pop of a queue that does not exist finds no partition, or, naming one, not that
// partition; no start is kept.
func (v015) noQueue(r PopRequest, _ int64, _ *waiter) EmptyReason {
	if r.Partition != "" {
		return EmptyPartitionNotFound
	}
	return EmptyNoPartition
}

func (v015) noPartition() EmptyReason { return EmptyPartitionNotFound }

// waitsBlind: the first pop of a "new" group that found nothing to decide its start on is
// blind while it waits. 0.15 stores such a start when a waiting pop re-checks, after the
// newest message present then, so what was pushed before that re-check is lost for the
// group. When the re-check comes is timing on a real broker; here it comes at the latest,
// once the wait ends, so every message pushed during the wait is lost: the worst case, and
// the same in every run.
func (e v015) waitsBlind(w *waiter) bool {
	r := &w.req
	isNew := r.SubscriptionFrom == nil && (r.FromNow || r.SubscriptionMode != "all")
	return w.group != QueueMode && isNew && e.storedStart(r.Queue, w.group) == nil
}

// recheck is the look a blind wait ends with, as a fresh pop: a "new" start decided now
// counts from after every message pushed while it waited, and is stored if the queue holds
// any. A wait that finds nothing answers as a long poll that timed out.
func (e *Engine) recheck(w *waiter) (PopResult, error) {
	w.blind = false
	res, _, err := e.evaluate(&w.req, nil)
	if err != nil || len(res.Messages) > 0 {
		return res, err
	}
	return e.emptyResult(w.req.Queue, w.group, &w.req), nil
}

// claimed forgets a start 0.15 does not store, and says why nothing was handed out.
func (e v015) claimed(res PopResult, m *groupMeta, q *queue, p *partition, hadStart bool) PopResult {
	parts := q.parts
	if p != nil {
		parts = []*partition{p}
	}
	switch {
	case hadStart:
	case !keepStart015(m, parts):
		e.dropStart(m)
	case p != nil:
		m.onlyFor = p // stored for this partition alone
	}
	if len(res.Messages) == 0 {
		e.empty(&res, m.group, p, parts, !hadStart && m.start != startAll)
	}
	return res
}

// leaseSeconds015 is 0.15's leaseTime for a queue a push creates or a configure leaves
// without one.
const leaseSeconds015 = 300

// EmptyReason says why a 0.15 pop handed out nothing; 0.15 answers each with its own body.
type EmptyReason uint8

const (
	EmptyNone              EmptyReason = iota // 2.0, or messages were handed out
	EmptyNoPartition                          // {"error":"no_available_partition"}
	EmptyLeaseHeld                            // {"error":"lease_held"}: the group holds the partition
	EmptyPartitionNotFound                    // {"error":"partition_not_found"}
	EmptyClaimed                              // a partition claimed with nothing new: success, a leaseId that holds nothing
)

// empty fills in why a 0.15 pop of group found nothing: parts are the partitions it looked
// at (the one named, when not nil), and decided tells whether it decided the group's start.
func (e v015) empty(res *PopResult, group string, named *partition, parts []*partition, decided bool) {
	var claimed *partition
	switch {
	case named != nil:
		p := named
		if e.liveLease(p.groups[group]) != nil {
			res.Empty = EmptyLeaseHeld
			return
		}
		claimed = p
	case decided:
		// The deciding pop claims a partition with messages before its start puts the cursor
		// past them.
		for _, p := range parts {
			if len(p.msgs) > 0 && e.liveLease(p.groups[group]) == nil {
				claimed = p
				break
			}
		}
	}
	if claimed == nil {
		res.Empty = EmptyNoPartition
		return
	}
	res.Empty = EmptyClaimed
	res.Partition, res.PartitionID, res.PartitionsClaimed = claimed.name, claimed.id, 1
	res.LeaseID = uuid.NewString()
}

// dropStart forgets a start 0.15 does not store, with the cursors its pop
// placed but did not read: a later pop decides afresh, from its own arrival.
func (e v015) dropStart(m *groupMeta) {
	delete(m.q.groups, m.group)
	for _, p := range m.q.parts {
		if gc := p.groups[m.group]; gc != nil && gc.lease == nil && !gc.counted() {
			e.dropCursor(gc)
		}
	}
}

// keepStart015 decides whether 0.15 stores the start a pop just decided: an "all" start is
// never stored, and a "new" or timestamp start only once a pop finds a partition with
// a message. Until then every pop decides afresh, from its own arrival.
func keepStart015(m *groupMeta, parts []*partition) bool {
	if m.start == startAll {
		return false
	}
	for _, p := range parts {
		if len(p.msgs) > 0 {
			return true
		}
	}
	return false
}
