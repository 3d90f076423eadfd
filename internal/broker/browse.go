package broker

import (
	"cmp"
	"container/heap"
	"errors"
	"slices"
	"sort"
	"time"
)

// Errors of the message routes, answered 404.
var (
	ErrPartitionNotFound = errors.New("partition not found")
	ErrMessageNotFound   = errors.New("message not found")
)

// Message statuses.
const (
	statusPending    = "pending"
	statusProcessing = "processing"
	statusCompleted  = "completed"
	statusDeadLetter = "dead_letter"
)

// BrowseQuery is a validated browse of a queue's messages. Nil pointers do not filter.
type BrowseQuery struct {
	Queue, Partition string
	Status           string // "", pending, processing, completed or dead_letter
	From, To         *time.Time
	FromOffset       *int64 // only with Partition
	Ascending        bool
	Limit, Offset    int
	Payload          bool
	Namespace, Task  *string
}

// Browse lists a queue's messages without leasing them. It reads the partitions in steps,
// copying what the listing needs of each (its log as it is and, to find a status, its groups'
// positions and leases and its dead letters), merges them without the lock, then reads the
// groups of the partitions it lists from, if it has not yet.
func (e *Engine) Browse(bq BrowseQuery) (MessageList, error) {
	s := e.steps()
	defer s.done()
	q := e.queues[bq.Queue]
	if q == nil {
		return MessageList{}, ErrQueueNotFound
	}
	parts := q.parts
	if bq.Partition != "" {
		p := q.byName[bq.Partition]
		if p == nil {
			return MessageList{}, ErrPartitionNotFound
		}
		parts = []*partition{p}
	}
	groups := attachedGroups(q)
	out := MessageList{Messages: []MessageEntry{}, Mode: modeOf(groups)}
	if (bq.Namespace != nil && *bq.Namespace != q.namespace) || (bq.Task != nil && *bq.Task != q.task) {
		return out, nil
	}
	labels := labelsOf(q)
	m := &merge{desc: !bq.Ascending}
	// What the walk keeps of each partition is allocated at once, outside the lock: an
	// allocation under it could make this read help the garbage collector while holding it.
	var looks []partitionLook
	var heads []mergeHead
	s.outside(func() {
		looks, heads = make([]partitionLook, len(parts)), make([]mergeHead, len(parts))
		m.heads = make([]*mergeHead, 0, len(parts))
		if bq.Status != "" { // every look reads its groups
			for i, room := range positions(len(looks), len(groups)) {
				looks[i].namedPos = room
			}
		}
	})
	for i, p := range parts {
		lo, hi := int64(0), p.lastOffset()
		if bq.From != nil {
			lo = max(lo, p.firstAtOrAfter(*bq.From))
		}
		if bq.To != nil {
			hi = min(hi, p.firstAfter(*bq.To)-1)
		}
		if bq.FromOffset != nil {
			if bq.Ascending {
				lo = max(lo, *bq.FromOffset)
			} else {
				hi = min(hi, *bq.FromOffset)
			}
		}
		if lo > hi {
			continue
		}
		look, h := &looks[i], &heads[i]
		look.copyLog(p, labels)
		ranges := h.whole[:]
		if h.whole[0] = [2]int64{lo, hi}; bq.Status != "" { // the ranges of a status come from the groups
			look.read(groups, s.now)
			ranges = look.statusRanges(bq.Status, lo, hi)
		}
		if h.start(look, ranges, m.desc) {
			m.heads = append(m.heads, h)
		}
		s.did(1 + len(look.namedPos) + len(look.dead))
	}
	maxSeq := e.seq
	var picked []pick
	s.outside(func() {
		picked = m.pick(bq, maxSeq)
		var unread []*partitionLook // the looks whose groups are read next
		for _, pk := range picked {
			if l := pk.look; !l.groupsRead && l.namedPos == nil {
				l.namedPos = []int64{} // listed once
				unread = append(unread, l)
			}
		}
		for i, room := range positions(len(unread), len(groups)) {
			unread[i].namedPos = room
		}
	})
	for _, pk := range picked {
		if !pk.look.groupsRead {
			pk.look.read(groups, s.now)
			s.did(1 + len(groups))
		}
	}
	s.outside(func() {
		out.Messages = make([]MessageEntry, len(picked))
		for i, pk := range picked {
			out.Messages[i] = pk.look.entry(pk.off, bq.Payload)
		}
	})
	return out, nil
}

// pick is one message a browse lists.
type pick struct {
	look *partitionLook
	off  int64
}

// pick walks the merged partitions: it skips bq.Offset entries and picks up to bq.Limit.
func (m *merge) pick(bq BrowseQuery, maxSeq int64) []pick {
	var out []pick
	skip := m.skipBySearch(bq.Offset, bq.Status, maxSeq)
	heap.Init(m)
	for m.Len() > 0 && len(out) < bq.Limit {
		h := m.heads[0]
		off := h.off
		if h.advance() {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
		if bq.Status != "" {
			if status, _ := h.look.status(off); status != bq.Status { // a dead letter inside a range
				continue
			}
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, pick{h.look, off})
	}
	return out
}

// firstAfter is the offset of the first message created after t.
func (p *partition) firstAfter(t time.Time) int64 {
	return int64(sort.Search(len(p.msgs), func(i int) bool { return p.msgs[i].createdAt.After(t) }))
}

// merge walks several partitions in storage order, newest or oldest first.
type merge struct {
	desc  bool
	heads []*mergeHead
}

type mergeHead struct {
	look   *partitionLook
	ranges [][2]int64 // ascending offset intervals to walk, inclusive
	i      int        // the interval off is in
	off    int64      // the next offset to take
	desc   bool
	whole  [1][2]int64 // the one interval of a walk without a status
}

// start places the head at the first offset of its walk; false when there is none.
func (h *mergeHead) start(look *partitionLook, ranges [][2]int64, desc bool) bool {
	if len(ranges) == 0 {
		return false
	}
	h.look, h.ranges, h.desc, h.off = look, ranges, desc, ranges[0][0]
	if desc {
		h.i = len(ranges) - 1
		h.off = ranges[h.i][1]
	}
	return true
}

// advance moves to the next offset in the walk's direction; false when there is none.
func (h *mergeHead) advance() bool {
	if h.desc {
		if h.off > h.ranges[h.i][0] {
			h.off--
			return true
		}
		if h.i == 0 {
			return false
		}
		h.i--
		h.off = h.ranges[h.i][1]
		return true
	}
	if h.off < h.ranges[h.i][1] {
		h.off++
		return true
	}
	if h.i == len(h.ranges)-1 {
		return false
	}
	h.i++
	h.off = h.ranges[h.i][0]
	return true
}

func (m *merge) Len() int { return len(m.heads) }
func (m *merge) Less(i, j int) bool {
	a, b := m.heads[i].look.msgs[m.heads[i].off].seq, m.heads[j].look.msgs[m.heads[j].off].seq
	if m.desc {
		return a > b
	}
	return a < b
}
func (m *merge) Swap(i, j int) { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *merge) Push(x any)    { m.heads = append(m.heads, x.(*mergeHead)) }
func (m *merge) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}

// modeOf describes which kinds of group read a queue.
func modeOf(groups []string) GroupKinds {
	mode := GroupKinds{}
	for _, g := range groups {
		if g == QueueMode {
			mode.HasQueueMode = true
		} else {
			mode.BusGroupsCount++
		}
	}
	switch {
	case mode.HasQueueMode && mode.BusGroupsCount > 0:
		mode.Type = "hybrid"
	case mode.HasQueueMode:
		mode.Type = "queue"
	case mode.BusGroupsCount > 0:
		mode.Type = "bus"
	default:
		mode.Type = "none"
	}
	return mode
}

// partitionLook is what a browse needs to know of one partition, copied so that the listing
// runs without the lock: its log, then (read) its groups and dead letters, O(groups + dead
// letters), after which a message's status costs O(log groups).
type partitionLook struct {
	p      *partition
	labels *queueLabels
	msgs   []storedMessage // the log when it was read (stored messages never change)

	groupsRead bool
	dead       []int64     // the offsets with a stored dead letter, ascending
	qm         *groupView  // queue mode's view, nil when it is not attached
	leased     []groupView // the attached named groups holding a live lease
	named      int         // the attached named groups
	namedPos   []int64     // their positions, ascending
}

// queueLabels are what a message entry says of its queue, read once per listing.
type queueLabels struct {
	name, namespace, task string
	priority              int64
}

func labelsOf(q *queue) *queueLabels {
	return &queueLabels{name: q.name, namespace: q.namespace, task: q.task, priority: q.priority()}
}

// positions is room for the positions of n groups in each of count looks, from one allocation
// made before the lock is taken for reading them.
func positions(count, n int) [][]int64 {
	buf, out := make([]int64, count*n), make([][]int64, count)
	for i := range out {
		out[i] = buf[i*n : i*n : (i+1)*n]
	}
	return out
}

// lookAt is the look of p with its groups read.
func lookAt(p *partition, labels *queueLabels, groups []string, now time.Time) *partitionLook {
	look := &partitionLook{}
	look.copyLog(p, labels)
	look.read(groups, now)
	return look
}

// copyLog makes look the look of p, with p's log as it is.
func (look *partitionLook) copyLog(p *partition, labels *queueLabels) {
	n := len(p.msgs)
	look.p, look.labels, look.msgs = p, labels, p.msgs[:n:n]
}

// read copies the partition's dead letters and the groups' positions and leases, at now.
func (look *partitionLook) read(groups []string, now time.Time) {
	p := look.p
	look.groupsRead = true
	if len(p.stats.deadAt) > 0 {
		look.dead = make([]int64, 0, len(p.stats.deadAt))
		for off := range p.stats.deadAt {
			look.dead = append(look.dead, off)
		}
		slices.Sort(look.dead)
	}
	for _, g := range groups {
		v := viewOf(p, g, p.q.groups[g], now)
		if g == QueueMode {
			look.qm = &v
			continue
		}
		look.named++
		look.namedPos = append(look.namedPos, v.pos)
		if v.live != nil {
			look.leased = append(look.leased, v)
		}
	}
	slices.Sort(look.namedPos)
}

// deadAt reports whether the message at off has a stored dead letter.
func (l *partitionLook) deadAt(off int64) bool {
	_, found := slices.BinarySearch(l.dead, off)
	return found
}

// inBatch reports whether off is in the view's live leased batch above its position.
func (v *groupView) inBatch(off int64) bool {
	return v.live != nil && off > v.pos && off >= v.leaseFirst && off <= v.leaseLast
}

// viewStatus is a G-view without the group's own dead letters.
func (v *groupView) viewStatus(off int64) string {
	switch {
	case off <= v.pos:
		return statusCompleted
	case v.inBatch(off):
		return statusProcessing
	}
	return statusPending
}

// consumedBy counts the named groups whose position is at or past off.
func (l *partitionLook) consumedBy(off int64) int64 {
	i, _ := slices.BinarySearch(l.namedPos, off)
	return int64(len(l.namedPos) - i)
}

// status is an entry's status and queueStatus.
func (l *partitionLook) status(off int64) (status, queueStatus string) {
	if l.deadAt(off) {
		return statusDeadLetter, statusDeadLetter
	}
	queueStatus = statusPending
	if l.qm != nil {
		queueStatus = l.qm.viewStatus(off)
		return queueStatus, queueStatus
	}
	switch {
	case l.named == 0:
		return statusPending, queueStatus
	case l.consumedBy(off) == int64(l.named):
		return statusCompleted, queueStatus
	}
	for i := range l.leased {
		if l.leased[i].inBatch(off) {
			return statusProcessing, queueStatus
		}
	}
	return statusPending, queueStatus
}

// entry builds the browse entry of the message at off.
func (l *partitionLook) entry(off int64, payload bool) MessageEntry {
	p, q, m := l.p, l.labels, &l.msgs[off]
	status, queueStatus := l.status(off)
	e := MessageEntry{
		ID: m.id, TransactionID: m.txID, PartitionID: p.id, Partition: p.name, Queue: q.name,
		QueuePath: q.name + "/" + p.name, Namespace: q.namespace, Task: q.task, QueuePriority: q.priority,
		Offset: off, TraceID: m.traceID, CreatedAt: m.createdAt, Status: status, QueueStatus: queueStatus,
		ConsumedBy: l.consumedBy(off), TotalGroups: int64(l.named),
	}
	if l.qm != nil && l.qm.live != nil && off >= l.qm.leaseFirst && off <= l.qm.leaseLast {
		e.LeaseExpiresAt = l.qm.live.expires
	}
	if payload {
		e.Payload = m.data
	}
	return e
}

// Message answers one message's detail, or ErrMessageNotFound.
func (e *Engine) Message(partitionID, transactionID string) (MessageDetail, error) {
	s := e.steps() // one step: O(groups)
	defer s.done()
	return e.message(partitionID, transactionID)
}

func (e *Engine) message(partitionID, transactionID string) (MessageDetail, error) {
	p := e.partitions[partitionID]
	if p == nil {
		return MessageDetail{}, ErrMessageNotFound
	}
	off, ok := p.byTx[transactionID]
	if !ok {
		return MessageDetail{}, ErrMessageNotFound
	}
	now := e.now()
	q := p.q
	groups := attachedGroups(q)
	look := lookAt(p, labelsOf(q), groups, now)
	d := MessageDetail{
		MessageEntry: look.entry(off, true),
		Config: MessageQueueConfig{
			LeaseTime: int64(q.leaseTime), RetryLimit: int64(q.retryLimit),
			RetryDelay: q.intOption("retryDelay"), TTL: q.intOption("ttl"), Priority: q.priority(),
		},
		Mode:   modeOf(groups),
		Groups: make([]MessageGroup, 0, len(groups)),
	}
	var latest *deadLetter
	for _, dl := range p.stats.deadAt[off] {
		if latest == nil || dl.failedAt.After(latest.failedAt) {
			latest = dl
		}
	}
	if latest != nil {
		d.ErrorMessage, d.RetryCount = ptr(latest.errMsg), ptr(int64(latest.retryCount))
	}
	for _, g := range groups {
		v := viewOf(p, g, q.groups[g], now)
		status := v.viewStatus(off)
		if e.deadBy[deadKey{p, off, g}] != nil {
			status = statusDeadLetter
		}
		mg := MessageGroup{Name: g, Consumed: off <= v.pos, Status: status}
		if v.live != nil && off >= v.leaseFirst && off <= v.leaseLast {
			mg.LeaseExpiresAt = v.live.expires
		}
		if v.gc != nil && off < int64(len(v.gc.attempts)) {
			mg.DeliveryAttempt = int64(v.gc.attempts[off])
		}
		d.Groups = append(d.Groups, mg)
	}
	return d, nil
}

// statusRanges is where messages of the given status ("" for any) lie in [lo, hi], found from
// the groups' positions and leases rather than message by message. Dead letters are
// listed by their own index; the other ranges may still hold a dead-lettered message, which
// the caller's status check skips.
func (l *partitionLook) statusRanges(status string, lo, hi int64) [][2]int64 {
	last := int64(len(l.msgs)) - 1
	var rs [][2]int64
	switch status {
	case "":
		rs = [][2]int64{{0, last}}
	case statusDeadLetter:
		for _, off := range l.dead {
			rs = append(rs, [2]int64{off, off})
		}
	default:
		done, leased := l.doneAndLeased()
		switch status {
		case statusCompleted:
			rs = [][2]int64{{0, done}}
		case statusProcessing:
			rs = leased
		case statusPending:
			from := done + 1
			for _, r := range leased {
				rs = append(rs, [2]int64{from, r[0] - 1})
				from = r[1] + 1
			}
			rs = append(rs, [2]int64{from, last})
		}
	}
	out := rs[:0]
	for _, r := range rs {
		if r[0], r[1] = max(r[0], lo), min(r[1], hi); r[0] <= r[1] {
			out = append(out, r)
		}
	}
	return out
}

// doneAndLeased is the offset up to which the entry status is completed, and the ascending,
// disjoint intervals above it that are processing.
func (l *partitionLook) doneAndLeased() (done int64, leased [][2]int64) {
	switch {
	case l.qm != nil:
		done = l.qm.pos
		if l.qm.live != nil && l.qm.leaseLast > done {
			leased = [][2]int64{{max(done+1, l.qm.leaseFirst), l.qm.leaseLast}}
		}
		return done, leased
	case l.named == 0:
		return -1, nil
	}
	done = l.namedPos[0]
	for _, v := range l.leased {
		if v.leaseLast > max(v.pos, done) {
			leased = append(leased, [2]int64{max(v.pos, done, v.leaseFirst-1) + 1, v.leaseLast})
		}
	}
	slices.SortFunc(leased, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	merged := leased[:0]
	for _, r := range leased {
		if n := len(merged); n > 0 && r[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return done, merged
}

// skipBySearch drops the first n entries of the walk without visiting them: it searches
// the store step that separates them from the rest, counting each partition's entries by binary
// search. It returns how many are left to skip one by one (none, unless a count is off).
func (m *merge) skipBySearch(n int, status string, maxSeq int64) int {
	if n == 0 || len(m.heads) == 0 {
		return n
	}
	// Entries taken first are those with the highest store steps (newest first) or the lowest.
	taken := func(s int64) int64 { // entries the walk takes before reaching step s
		var total int64
		for _, h := range m.heads {
			total += h.countBeyond(s, m.desc, status)
		}
		return total
	}
	lo, hi := int64(0), maxSeq+1 // the boundary step, searched in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if m.desc {
			// Smallest s with taken(s) <= n: entries above s are the ones dropped.
			if taken(mid) <= int64(n) {
				hi = mid
			} else {
				lo = mid + 1
			}
		} else {
			// Largest s with taken(s) <= n, searched as the smallest s with taken(s+1) > n.
			if taken(mid+1) > int64(n) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
	}
	dropped := taken(lo)
	kept := m.heads[:0]
	for _, h := range m.heads {
		if h.moveBeyond(lo, m.desc) {
			kept = append(kept, h)
		}
	}
	m.heads = kept
	return n - int(dropped)
}

// seqIndex is the first offset of msgs stored after step s (store steps grow with offsets).
func seqIndex(msgs []storedMessage, s int64) int64 {
	return int64(sort.Search(len(msgs), func(i int) bool { return msgs[i].seq > s }))
}

// countBeyond counts the head's entries the walk takes before step s: those stored after s
// when newest first, before s when oldest first. A status filter other than dead letters does
// not list the dead-lettered messages inside its ranges, so they are not counted.
func (h *mergeHead) countBeyond(s int64, desc bool, status string) int64 {
	msgs := h.look.msgs
	var cut int64 // desc: offsets >= cut are beyond; asc: offsets < cut are
	if desc {
		cut = seqIndex(msgs, s)
	} else {
		cut = seqIndex(msgs, s-1)
	}
	var total int64
	for _, r := range h.ranges {
		if desc {
			total += max(0, r[1]-max(r[0], cut)+1)
		} else {
			total += max(0, min(r[1], cut-1)-r[0]+1)
		}
	}
	if status != "" && status != statusDeadLetter {
		for _, off := range h.look.dead {
			if (desc && off >= cut) || (!desc && off < cut) {
				if i, ok := slices.BinarySearchFunc(h.ranges, off, func(r [2]int64, o int64) int {
					switch {
					case r[1] < o:
						return -1
					case r[0] > o:
						return 1
					}
					return 0
				}); ok && i >= 0 {
					total--
				}
			}
		}
	}
	return total
}

// moveBeyond places the head on its first entry past the ones counted by countBeyond(s); false
// when none is left.
func (h *mergeHead) moveBeyond(s int64, desc bool) bool {
	msgs := h.look.msgs
	if desc {
		cut := seqIndex(msgs, s) - 1 // the last offset stored at or before s
		for h.i >= 0 && h.ranges[h.i][0] > cut {
			h.i--
		}
		if h.i < 0 {
			return false
		}
		h.off = min(h.off, h.ranges[h.i][1], cut)
		return true
	}
	cut := seqIndex(msgs, s-1) // the first offset stored at or after s
	for h.i < len(h.ranges) && h.ranges[h.i][1] < cut {
		h.i++
	}
	if h.i == len(h.ranges) {
		return false
	}
	h.off = max(h.off, h.ranges[h.i][0], cut)
	return true
}
