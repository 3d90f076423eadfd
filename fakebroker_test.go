package queen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// fakeBroker is a small broker for one queue and one consumer group, served as an
// http.RoundTripper, so that a client runs against it inside a synctest bubble: no socket,
// every wait on the bubble's clock. It models just what the lease, bound and start tests look
// at: leases that run out on time, a round trip of a chosen length, acks that never answer,
// and, as a 0.15 broker (gen015), the answers without offsets, the retry counter that belongs
// to the (partition, group) and resets only when a completed ack finishes a whole leased batch,
// and the `new` start that a waiting pop stores when it re-checks.
type fakeBroker struct {
	queue      string
	gen015     bool
	rtt        time.Duration // every request takes this long to answer
	leaseTime  time.Duration // a pop's lease, unless it says leaseSeconds (2.0 only)
	retryLimit int
	ackHangs   bool // acks are never answered: they wait for their ctx
	// dropPartitionPops is how many pops of one partition lease their messages and then lose
	// their answer: the messages are leased to nobody until the lease runs out.
	dropPartitionPops int

	mu      sync.Mutex
	parts   []*fakePart
	byID    map[string]*fakePart
	byName  map[string]*fakePart
	leases  map[string]*fakeLease
	changed chan struct{} // closed and replaced at every push and release: waiting pops look again
	next    int           // the partition the next pop looks at first
	seq     int

	// The group's start (a named group in mode new or from a time): decided once.
	startStored bool

	// What the tests read.
	expired      int            // leases that ran out while their messages were still held
	lateExtends  int            // extends that came after their lease ran out
	extends      int            // extends answered
	extendLog    []fakeExtend   // every extend answered
	pops         int            // pops answered
	acks         int            // ack requests answered
	handedOut    map[string]int // transactionId: deliveries
	completed    map[string]bool
	deadLettered []string
	countHeld    bool  // keep the next two (a cost that grows with the leases held)
	maxLeased    int   // most messages held under live leases at once
	heldAtPops   []int // bytes of data held under live leases when each pop arrived
	waitingPops  int
	waiting      chan struct{} // receives when a pop starts waiting
	onComplete   func(done int)
}

type fakePart struct {
	name, id string
	msgs     []fakeMsg
	cursor   int // index of the last message done; -1 before the first
	lease    *fakeLease
	counter  int // 0.15: the (partition, group)'s retry counter
	failures map[int]int
}

type fakeMsg struct {
	tx        string
	data      string
	createdAt time.Time
}

// fakeExtend is one extend the fake answered.
type fakeExtend struct {
	lease string
	since time.Duration // since the lease began
}

type fakeLease struct {
	id      string
	began   time.Time
	expires time.Time
	held    []*fakeHold
}

// fakeHold is the run of one partition's messages a lease holds.
type fakeHold struct {
	p           *fakePart
	first, last int
	acked       int
	ended       bool
}

func newFakeBroker(queue string, gen015 bool) *fakeBroker {
	return &fakeBroker{queue: queue, gen015: gen015, leaseTime: 60 * time.Second, retryLimit: 3,
		byID: map[string]*fakePart{}, byName: map[string]*fakePart{}, leases: map[string]*fakeLease{}, changed: make(chan struct{}),
		handedOut: map[string]int{}, completed: map[string]bool{}, waiting: make(chan struct{}, 64)}
}

// client is a client of the fake, closed at the test's end.
func (f *fakeBroker) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	all := append([]Option{WithHTTPClient(&http.Client{Transport: f}),
		WithRetry(2, time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := New("http://fake.test", all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// push stores messages in a partition, created now: data is each message's payload (a JSON
// value), its transactionId "<partition>-<i>".
func (f *fakeBroker) push(partition string, data ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.part(partition)
	for _, d := range data {
		p.msgs = append(p.msgs, fakeMsg{tx: fmt.Sprintf("%s-%d", partition, len(p.msgs)), data: d,
			createdAt: time.Now()})
	}
	f.wake()
}

// pushN stores n messages {"i":<i>} in a partition.
func (f *fakeBroker) pushN(partition string, n int) {
	data := make([]string, n)
	for i := range data {
		data[i] = fmt.Sprintf(`{"i":%d}`, i)
	}
	f.push(partition, data...)
}

// grant stores one message in a new partition and leases it, for a test of the renewer alone,
// and returns the leaseId.
func (f *fakeBroker) grant(partition string) string {
	f.push(partition, `{}`)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claim(time.Now(), partition, 1, 1, f.leaseTime).id
}

func (f *fakeBroker) part(name string) *fakePart {
	if p := f.byName[name]; p != nil {
		return p
	}
	f.seq++
	p := &fakePart{name: name, id: fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq), cursor: -1,
		failures: map[int]int{}}
	f.parts = append(f.parts, p)
	f.byID[p.id] = p
	f.byName[name] = p
	return p
}

func (f *fakeBroker) wake() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeBroker) stats(read func(f *fakeBroker)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	read(f)
}

// RoundTrip answers one request after the round trip.
func (f *fakeBroker) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
	}
	time.Sleep(f.rtt / 2)
	status, answer := f.serve(r, body)
	switch status {
	case 0:
		return nil, r.Context().Err()
	case -1:
		return nil, errors.New("connection reset after the request was applied")
	}
	time.Sleep(f.rtt - f.rtt/2)
	resp := &http.Response{StatusCode: status, Request: r, Header: http.Header{
		"Content-Type": {"application/json"},
		"Date":         {time.Now().UTC().Format(http.TimeFormat)},
	}, Body: io.NopCloser(bytes.NewReader(answer))}
	return resp, nil
}

func (f *fakeBroker) serve(r *http.Request, body []byte) (int, []byte) {
	rt, _ := route.Match(r.Method, r.URL.EscapedPath())
	switch rt {
	case route.PopQueue, route.PopPartition:
		return f.pop(r)
	case route.AckBatch, route.Ack:
		if f.ackHangs {
			<-r.Context().Done()
			return 0, nil
		}
		return f.ack(rt, body)
	case route.Extend:
		segs := strings.Split(r.URL.Path, "/")
		return f.extend(segs[len(segs)-2], body)
	default:
		return http.StatusNotFound, []byte(`{"error":"not served by the fake"}`)
	}
}

// expire ends the leases that have run out.
func (f *fakeBroker) expire(now time.Time) {
	for _, l := range f.leases {
		if !now.Before(l.expires) {
			f.expireLease(l)
		}
	}
}

func (f *fakeBroker) expireLease(l *fakeLease) {
	for _, h := range l.held {
		if !h.ended {
			f.expired++
			f.endHold(h)
		}
	}
	delete(f.leases, l.id)
}

func (f *fakeBroker) endHold(h *fakeHold) {
	h.ended = true
	if h.p.lease != nil {
		h.p.lease = nil
		f.wake()
	}
}

func (f *fakeBroker) leased() (n, bytes int) {
	for _, l := range f.leases {
		for _, h := range l.held {
			if h.ended {
				continue
			}
			for i := max(h.first, h.p.cursor+1); i <= h.last; i++ {
				n++
				bytes += len(h.p.msgs[i].data)
			}
		}
	}
	return n, bytes
}

func (f *fakeBroker) pop(r *http.Request) (int, []byte) {
	q := r.URL.Query()
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/pop/queue/"), "/")
	only := ""
	if len(segs) == 3 {
		only, _ = url.PathUnescape(segs[2])
	}
	batch, _ := strconv.Atoi(q.Get("batch"))
	if batch <= 0 {
		batch = 1
		if !f.gen015 && q.Get("autopilot") == "true" {
			batch = 100
		}
	}
	partitions, _ := strconv.Atoi(q.Get("partitions"))
	partitions = max(partitions, 1)
	if only != "" {
		partitions = 1
	}
	lease := f.leaseTime
	if s, _ := strconv.Atoi(q.Get("leaseSeconds")); s > 0 && !f.gen015 {
		lease = time.Duration(s) * time.Second
	}
	wait := q.Get("wait") == "true"
	timeout, _ := strconv.Atoi(q.Get("timeout"))
	deadline := time.Now().Add(time.Duration(timeout) * time.Millisecond)
	named := q.Get("consumerGroup") != ""

	f.mu.Lock()
	if f.countHeld {
		_, held := f.leased()
		f.heldAtPops = append(f.heldAtPops, held)
	}
	for {
		now := time.Now()
		f.expire(now)
		if named && !f.startStored {
			f.decideStart(q)
		}
		if l := f.claim(now, only, batch, partitions, lease); l != nil {
			f.pops++
			if only != "" && f.dropPartitionPops > 0 {
				f.dropPartitionPops--
				f.mu.Unlock()
				return -1, nil
			}
			answer := f.popAnswer(l, q.Get("consumerGroup"))
			f.mu.Unlock()
			return http.StatusOK, answer
		}
		left := time.Until(deadline)
		if !wait || left <= 0 {
			break
		}
		changed := f.changed
		f.waitingPops++
		f.mu.Unlock()
		select {
		case f.waiting <- struct{}{}:
		default:
		}
		timer := time.NewTimer(left)
		select {
		case <-changed:
		case <-timer.C:
		case <-r.Context().Done():
		}
		timer.Stop()
		f.mu.Lock()
		f.waitingPops--
		if r.Context().Err() != nil {
			f.mu.Unlock()
			return 0, nil
		}
	}
	f.pops++
	f.mu.Unlock()
	if !f.gen015 {
		return http.StatusNoContent, nil
	}
	if wait {
		return http.StatusOK, []byte(`{"consumerGroup":"g","leaseId":null,"messages":[],"partition":"","partitionId":null,"queue":"` + f.queue + `","success":true}`)
	}
	return http.StatusOK, []byte(`{"error":"no_available_partition","messages":[],"success":false}`)
}

// decideStart decides a named group's start from its pop's parameters: after the newest
// message present (mode new), at the oldest (all), or at the first message created at or
// after subscriptionFrom.
// A 2.0 broker stores it at the group's first pop. A 0.15 broker stores it only once a
// partition holds a message, at a pop's arrival or when a waiting pop looks again.
func (f *fakeBroker) decideStart(q url.Values) {
	present := false
	for _, p := range f.parts {
		present = present || len(p.msgs) > 0
	}
	if f.gen015 && !present {
		return // nothing stored: the next look decides again
	}
	from, err := time.Parse(time.RFC3339Nano, q.Get("subscriptionFrom"))
	for _, p := range f.parts {
		p.cursor = len(p.msgs) - 1
		if q.Get("subscriptionMode") == "all" {
			p.cursor = -1
		}
		if err == nil {
			p.cursor = -1
			for i, m := range p.msgs {
				if m.createdAt.Before(from) {
					p.cursor = i
				}
			}
		}
	}
	f.startStored = true
}

// claim leases up to batch messages across up to partitions free partitions.
func (f *fakeBroker) claim(now time.Time, only string, batch, partitions int, lease time.Duration) *fakeLease {
	var l *fakeLease
	for i := range f.parts {
		if batch == 0 || (l != nil && len(l.held) == partitions) {
			break
		}
		p := f.parts[(f.next+i)%len(f.parts)]
		if (only != "" && p.name != only) || p.lease != nil || p.cursor+1 >= len(p.msgs) {
			continue
		}
		if l == nil {
			f.seq++
			l = &fakeLease{id: fmt.Sprintf("lease-%d", f.seq), began: now, expires: now.Add(lease)}
		}
		h := &fakeHold{p: p, first: p.cursor + 1, last: min(p.cursor+batch, len(p.msgs)-1)}
		batch -= h.last - h.first + 1
		l.held = append(l.held, h)
		p.lease = l
	}
	if l == nil {
		return nil
	}
	f.next = (f.next + 1) % len(f.parts)
	f.leases[l.id] = l
	if f.countHeld {
		if n, _ := f.leased(); n > f.maxLeased {
			f.maxLeased = n
		}
	}
	return l
}

func (f *fakeBroker) popAnswer(l *fakeLease, group string) []byte {
	first := l.held[0].p
	a := wire.PopAnswer{Success: new(true), Queue: f.queue, Partition: first.name,
		PartitionID: &first.id, LeaseID: &l.id, ConsumerGroup: group, PartitionsClaimed: len(l.held),
		Messages: []wire.Message{}}
	for _, h := range l.held {
		for i := h.first; i <= h.last; i++ {
			m := h.p.msgs[i]
			f.handedOut[m.tx]++
			w := wire.Message{ID: fmt.Sprintf("%s-id", m.tx), TransactionID: m.tx, Data: wire.Value(m.data),
				CreatedAt: m.createdAt.UTC().Format(time.RFC3339Nano), PartitionID: h.p.id,
				Partition: h.p.name, LeaseID: l.id, Queue: f.queue}
			if !f.gen015 {
				off, attempt := int64(i), f.handedOut[m.tx]
				w.Offset, w.DeliveryAttempt = &off, &attempt
			}
			a.Messages = append(a.Messages, w)
		}
	}
	raw, err := wire.Marshal(&a)
	if err != nil {
		panic(err)
	}
	return raw
}

func (f *fakeBroker) ack(rt route.Route, body []byte) (int, []byte) {
	var items []wire.AckRequest
	if rt == route.AckBatch {
		var b wire.AckBatchRequest
		if err := wire.Unmarshal(body, &b); err != nil {
			return http.StatusBadRequest, []byte(`{"error":"bad body"}`)
		}
		items = b.Acknowledgments
	} else {
		var one wire.AckRequest
		if err := wire.Unmarshal(body, &one); err != nil {
			return http.StatusBadRequest, []byte(`{"error":"bad body"}`)
		}
		items = []wire.AckRequest{one}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire(time.Now())
	f.acks++
	out := make([]string, len(items))
	for i, it := range items {
		ok, dlq, released, reason := f.apply(it)
		errText := "null"
		if reason != "" {
			errText = strconv.Quote(reason)
		}
		out[i] = fmt.Sprintf(`{"dlq":%t,"error":%s,"index":%d,"leaseReleased":%t,"success":%t,"transactionId":%q}`,
			dlq, errText, i, released, ok, it.TransactionID)
	}
	return http.StatusOK, []byte("[" + strings.Join(out, ",") + "]")
}

// apply applies one ack item as the broker generation does.
func (f *fakeBroker) apply(it wire.AckRequest) (ok, dlq, released bool, reason string) {
	p := f.byID[it.PartitionID]
	if p == nil {
		return false, false, false, "Message not found"
	}
	idx := -1
	for i, m := range p.msgs {
		if m.tx == it.TransactionID {
			idx = i
		}
	}
	if idx < 0 {
		return false, false, false, "Message not found"
	}
	var h *fakeHold
	if p.lease != nil {
		for _, hh := range p.lease.held {
			if hh.p == p && !hh.ended {
				h = hh
			}
		}
	}
	if it.LeaseID != "" && (p.lease == nil || p.lease.id != it.LeaseID || h == nil) {
		return false, false, false, "Invalid or expired lease"
	}
	status := it.Status
	if status == "" {
		status = "completed"
	}
	count := func() bool { // one more ack of the hold; the lease ends once each message had one
		if h == nil {
			return false
		}
		h.acked++
		if h.acked >= h.last-h.first+1 || (!f.gen015 && p.cursor >= h.last) {
			f.endHold(h)
			return true
		}
		return false
	}
	switch status {
	case "completed":
		p.cursor = max(p.cursor, idx)
		f.completed[it.TransactionID] = true
		released = count()
		if f.gen015 && released {
			p.counter = 0 // a completed that finishes the whole leased batch
		}
		if f.onComplete != nil {
			f.onComplete(len(f.completed))
		}
		return true, false, released, ""
	case "retry":
		if h != nil {
			f.endHold(h)
		}
		return true, false, h != nil, ""
	case "failed":
		spent := 0
		if f.gen015 {
			p.counter++
			spent = p.counter
		} else {
			p.failures[idx]++
			spent = p.failures[idx]
		}
		if spent <= f.retryLimit {
			if h != nil {
				f.endHold(h)
			}
			return true, false, h != nil, ""
		}
	}
	// dlq, or a failed with the budget spent: filed, the cursor moves to it.
	f.deadLettered = append(f.deadLettered, it.TransactionID)
	p.cursor = max(p.cursor, idx)
	return true, true, count(), ""
}

func (f *fakeBroker) extend(leaseID string, body []byte) (int, []byte) {
	var req wire.ExtendRequest
	_ = wire.Unmarshal(body, &req)
	secs := int64(60)
	if req.Seconds != nil {
		secs = *req.Seconds
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	l := f.leases[leaseID]
	if l != nil && !now.Before(l.expires) {
		f.lateExtends++
		f.expireLease(l)
	}
	if f.leases[leaseID] == nil {
		return http.StatusOK, []byte(`[{"error":"Lease already expired","expiresAt":null,"index":0,"leaseId":"` + leaseID + `","success":false}]`)
	}
	f.extends++
	f.extendLog = append(f.extendLog, fakeExtend{lease: leaseID, since: now.Sub(l.began)})
	l.expires = later(l.expires, now.Add(time.Duration(secs)*time.Second))
	return http.StatusOK, []byte(`[{"error":null,"expiresAt":"` + l.expires.UTC().Format(time.RFC3339Nano) +
		`","index":0,"leaseId":"` + leaseID + `","success":true}]`)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// awaitWaitingPop blocks until a pop is waiting on the fake, or ctx ends.
func (f *fakeBroker) awaitWaitingPop(ctx context.Context) bool {
	select {
	case <-f.waiting:
		return true
	case <-ctx.Done():
		return false
	}
}
