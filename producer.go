package queen

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queenmq/queen-go/internal/route"
)

// Producer defaults, used where a ProducerConfig field is zero.
const (
	defaultLinger      = 5 * time.Millisecond
	defaultMaxBatch    = 500
	defaultMaxBuffered = 10000

	// producerRequests is how many push requests a Producer keeps in flight at most, and
	// producerResends how many of them may be resends of failing partitions, so that those
	// never take every slot from the healthy ones.
	producerRequests = 8
	producerResends  = producerRequests / 2

	// clientCloseFlush bounds how long Client.Close waits for a Producer it closes to flush.
	clientCloseFlush = 10 * time.Second
)

// ProducerConfig configures a Producer. Zero fields take their defaults.
type ProducerConfig struct {
	// Linger is how long an item may wait for others to share its request. Default 5ms.
	Linger time.Duration
	// MaxBatch is the most items one request carries, 1 to 10,000. Default 500.
	MaxBatch int
	// MaxBuffered is the most items accepted by Send and not yet answered; Send blocks beyond
	// it. Default 10,000.
	MaxBuffered int
	// OnResult is called exactly once for every item Send accepted: with the broker's result
	// (Status "queued", or "duplicate" when the partition already held its transactionId) and
	// a nil error, or with the item's final error. item is the item as sent, its TransactionID
	// filled in. It runs on the Producer's goroutines, for the items of one (queue, partition)
	// in Send order: keep it short, and do not call Flush or Close from it. Nil: final errors
	// are logged with the client's logger, one line per request.
	OnResult func(queue string, item PushItem, res PushResult, err error)
}

// Producer publishes items in the background, gathered into few large requests: the fast way
// to push many small messages. Items of any queue and partition share requests, several
// requests are in flight at once, and the items of one (queue, partition) are stored in the
// order Send accepted them: a partition has items in one request at a time. Every item gets a
// transactionId before it is first sent (a client-made UUIDv7 when it has none), so a request
// retried after a lost answer is deduplicated by the broker and nothing is stored twice.
//
// A request that fails with a connection error, 429 or 5xx is sent again, after the client's
// backoff (WithRetry), until it is answered or Close gives up; WithRetry(0, ...) makes the
// first failure final. The partitions of a failing request are then sent each on its own, so a
// (queue, partition) whose requests keep failing holds back no other: the rest are stored as if
// it were healthy. A request refused with another 4xx than 401 or 403 is split until only the
// items the broker refuses get its error. The client's logger hears, at warn, when requests
// start failing and when they succeed again, with the number of items waiting.
//
// Nothing accepted is dropped silently: OnResult reports each item once. A Producer is safe
// for concurrent use. Close it when done (Client.Close closes it too, giving it 10 seconds to
// flush).
type Producer struct {
	c        *Client
	linger   time.Duration
	maxBatch int
	onResult func(queue string, item PushItem, res PushResult, err error)

	room    chan struct{} // one token per accepted, unanswered item
	refused atomic.Bool   // Close was called: Send refuses items
	closing chan struct{} // closed by Close: a Send waiting for room returns ErrClosed
	wake    chan struct{} // buffered 1: the dispatcher has something to look at

	mu         sync.Mutex
	closed     bool
	stopping   bool              // Close has flushed or given up: the dispatcher ends when all is answered
	lanes      map[laneKey]*lane // the partitions with items accepted and not answered
	ready      laneHeap          // healthy lanes with items and no request in flight, oldest item first
	retrying   laneHeap          // failing lanes waiting out their backoff, soonest first
	readyItems int               // the items of the ready lanes
	requests   int               // requests in flight
	resends    int               // of which, failing lanes' resends
	failing    int               // lanes whose last request failed
	seq        uint64            // items accepted so far
	epoch      uint64            // Flush calls so far; items accepted before the latest go at once
	unanswered map[uint64]int    // by epoch
	answered   chan struct{}     // closed when items are answered, for a waiting Flush
	idle       bool              // the dispatcher waits, until wakesAt (zero: until woken)
	wakesAt    time.Time
	giveUp     context.Context // ends when Close's ctx ended first: retries stop, the rest fail
	abandon    context.CancelCauseFunc

	stopOnce  sync.Once
	wg        sync.WaitGroup
	finish    func() // unregisters from the client
	closeDone chan struct{}
}

// NewProducer starts a Producer that publishes through c. It validates cfg (an error wrapping
// ErrInvalidOption names the field) and returns ErrClosed on a closed Client.
func (c *Client) NewProducer(cfg ProducerConfig) (*Producer, error) {
	switch {
	case cfg.Linger < 0:
		return nil, invalidOption("ProducerConfig.Linger", cfg.Linger, "must not be negative")
	case cfg.MaxBatch < 0 || cfg.MaxBatch > maxPushItems:
		return nil, invalidOption("ProducerConfig.MaxBatch", cfg.MaxBatch,
			fmt.Sprintf("must be 1 to %d, the most items one push may carry (0: %d)", maxPushItems, defaultMaxBatch))
	case cfg.MaxBuffered < 0:
		return nil, invalidOption("ProducerConfig.MaxBuffered", cfg.MaxBuffered,
			fmt.Sprintf("must be positive (0: %d)", defaultMaxBuffered))
	}
	p := &Producer{c: c, linger: cfg.Linger, maxBatch: cfg.MaxBatch, onResult: cfg.OnResult,
		closing: make(chan struct{}), wake: make(chan struct{}, 1), closeDone: make(chan struct{}),
		lanes: map[laneKey]*lane{}, unanswered: map[uint64]int{}, retrying: laneHeap{byRetry: true}}
	if p.linger == 0 {
		p.linger = defaultLinger
	}
	if p.maxBatch == 0 {
		p.maxBatch = defaultMaxBatch
	}
	buffered := cfg.MaxBuffered
	if buffered == 0 {
		buffered = defaultMaxBuffered
	}
	done, finish, err := c.startLoop()
	if err != nil {
		return nil, err
	}
	p.finish = finish
	p.room = make(chan struct{}, buffered)
	p.giveUp, p.abandon = context.WithCancelCause(context.Background())
	p.wg.Add(1)
	go p.dispatch()
	go p.closeWithClient(done)
	return p, nil
}

// closeWithClient closes the Producer when its Client closes.
func (p *Producer) closeWithClient(clientDone <-chan struct{}) {
	select {
	case <-clientDone:
		ctx, cancel := context.WithTimeout(context.Background(), clientCloseFlush)
		defer cancel()
		_ = p.Close(ctx)
	case <-p.closeDone:
	}
	p.finish()
}

// Send accepts item for queue and returns once it is buffered: the push happens in the
// background and its outcome goes to OnResult. item.Partition picks its partition (Default
// when empty). The item is checked and encoded first, so a bad one is refused with an error
// wrapping ErrInvalidOption and is never sent. When MaxBuffered items are unanswered, Send
// blocks until there is room or ctx ends (returning ctx's error; the item is not accepted).
// After Close, Send returns ErrClosed.
func (p *Producer) Send(ctx context.Context, queue string, item PushItem) error {
	if p.refused.Load() || p.c.isClosed() {
		return ErrClosed
	}
	if err := checkNameField("queue", queue); err != nil {
		return err
	}
	now := time.Now()
	scratch := getBuffer()
	scratch.Grow(512)
	enc, idAt, err := appendPushItem(scratch.AvailableBuffer(), "item", -1, queue, "", &item)
	if err != nil {
		putBuffer(scratch)
		return err
	}
	q := queued{at: now, queue: queue, item: item, enc: bytes.Clone(enc), idAt: idAt}
	putBuffer(scratch)
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case p.room <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closing:
		return ErrClosed
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.room
		return ErrClosed
	}
	p.seq++
	q.seq, q.epoch = p.seq, p.epoch
	p.unanswered[q.epoch]++
	key := laneKey{queue, partitionName(item.Partition)}
	l := p.lanes[key]
	if l == nil {
		l = &lane{key: key}
		p.lanes[key] = l
	}
	l.items.push(q)
	full := len(p.room) == cap(p.room)
	if !l.busy && l.fails == 0 {
		p.readyItems++
		if l.items.len() == 1 {
			heap.Push(&p.ready, l)
		}
	}
	// The dispatcher needs waking to time the linger of an item due before it would wake, for
	// a full request, or when no more items can come.
	wake := p.idle && p.requests < producerRequests &&
		(p.wakesAt.IsZero() || now.Add(p.linger).Before(p.wakesAt) || p.readyItems >= p.maxBatch || full)
	if wake {
		p.idle = false
	}
	p.mu.Unlock()
	if wake {
		p.poke()
	}
	return nil
}

func (p *Producer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Flush sends what is buffered without waiting for Linger and returns nil once every item
// accepted before the call is answered (its OnResult has returned, with a result or an error),
// or ctx's error when ctx ends first.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	epoch := p.epoch
	p.epoch++
	p.mu.Unlock()
	p.poke()
	for {
		p.mu.Lock()
		if p.flushed(epoch) {
			p.mu.Unlock()
			return nil
		}
		if p.answered == nil {
			p.answered = make(chan struct{})
		}
		ch := p.answered
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// flushed reports whether every item accepted up to epoch is answered.
func (p *Producer) flushed(epoch uint64) bool {
	for e := range p.unanswered {
		if e <= epoch {
			return false
		}
	}
	return true
}

// Close refuses new items (Send returns ErrClosed), flushes, stops the Producer and returns
// nil once every accepted item is answered. When ctx ends first, it stops retrying, reports
// every unanswered item to OnResult with an error wrapping ErrClosed (and ErrOutcomeUnknown
// for an item a request may have stored without an answer), and returns ctx's error. Close is
// idempotent.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.refused.Store(true)
		close(p.closing)
	}
	p.mu.Unlock()
	err := p.Flush(ctx)
	if err != nil {
		p.abandon(err)
	}
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopping = true
		p.mu.Unlock()
		p.poke()
		p.wg.Wait()
		close(p.closeDone)
	})
	<-p.closeDone
	return err
}

// dispatch starts each request as soon as one is due and there is a slot for it, until the
// Producer stops.
func (p *Producer) dispatch() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		p.idle = false
		if p.giveUp.Err() != nil {
			if left := p.takeWaiting(); len(left) > 0 {
				p.mu.Unlock()
				p.answerEach(left, func(q *queued) error { return closedError(context.Cause(p.giveUp), q.maybeStored) })
				continue
			}
		}
		if p.stopping && p.requests == 0 && len(p.lanes) == 0 {
			p.mu.Unlock()
			return
		}
		now := time.Now()
		if batch, lanes, resend := p.next(now); batch != nil {
			p.mu.Unlock()
			p.wg.Add(1)
			go p.run(batch, lanes, resend)
			continue
		}
		wait := p.nextDue(now)
		p.idle, p.wakesAt = true, time.Time{}
		if wait > 0 {
			p.wakesAt = now.Add(wait)
		}
		p.mu.Unlock()
		var due <-chan time.Time
		var timer *time.Timer
		if wait > 0 {
			timer = time.NewTimer(wait)
			due = timer.C
		}
		var gaveUp <-chan struct{}
		if p.giveUp.Err() == nil {
			gaveUp = p.giveUp.Done()
		}
		select {
		case <-p.wake:
		case <-due:
		case <-gaveUp:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// next takes the items of the request due now, if any, and marks their lanes busy: a failing
// lane's resend once its backoff is over, alone; else, when the oldest waiting item has
// lingered enough, a full request is possible, a Flush or Close asks, or the buffer is full,
// the oldest waiting lanes' items up to MaxBatch.
func (p *Producer) next(now time.Time) (batch []queued, lanes []*lane, resend bool) {
	if p.requests >= producerRequests {
		return nil, nil, false
	}
	if p.resends < producerResends && p.retrying.Len() > 0 && !p.retrying.lanes[0].retryAt.After(now) {
		l := heap.Pop(&p.retrying).(*lane)
		l.busy = true
		p.requests++
		p.resends++
		batch, _ = p.take(nil, l, 0)
		return batch, []*lane{l}, true
	}
	if p.ready.Len() == 0 {
		return nil, nil, false
	}
	oldest := p.ready.lanes[0].items.at(0)
	due := p.readyItems >= p.maxBatch || len(p.room) == cap(p.room) || p.stopping ||
		oldest.epoch < p.epoch || now.Sub(oldest.at) >= p.linger
	if !due {
		return nil, nil, false
	}
	size := len(pushBodyHead) + len(pushBodyTail)
	for p.ready.Len() > 0 && len(batch) < p.maxBatch {
		l := p.ready.lanes[0]
		waiting := l.items.len()
		if batch, size = p.take(batch, l, size); l.items.len() == waiting {
			break // the request is full by size
		}
		heap.Pop(&p.ready)
		p.readyItems -= waiting
		l.busy = true
		lanes = append(lanes, l)
	}
	p.requests++
	return batch, lanes, false
}

// take moves the first items of l to batch while batch stays within MaxBatch items and,
// unless it is empty, maxPushBytes (size counts the body as encoded so far).
func (p *Producer) take(batch []queued, l *lane, size int) ([]queued, int) {
	k := 0
	for k < l.items.len() && len(batch)+k < p.maxBatch {
		s := len(l.items.at(k).enc) + 1
		if size+s > maxPushBytes && len(batch)+k > 0 {
			break
		}
		size += s
		k++
	}
	return l.items.take(batch, k), size
}

// nextDue is how long until a request may be due without anything else happening (0: never):
// the oldest item's linger, or the soonest end of a failing lane's backoff.
func (p *Producer) nextDue(now time.Time) time.Duration {
	if p.requests >= producerRequests {
		return 0 // an answer wakes the dispatcher
	}
	var wait time.Duration
	if p.ready.Len() > 0 {
		wait = max(p.ready.lanes[0].items.at(0).at.Add(p.linger).Sub(now), time.Microsecond)
	}
	if p.resends < producerResends && p.retrying.Len() > 0 {
		w := max(p.retrying.lanes[0].retryAt.Sub(now), time.Microsecond)
		if wait == 0 || w < wait {
			wait = w
		}
	}
	return wait
}

// takeWaiting removes every item no request carries, for Close to give up on.
func (p *Producer) takeWaiting() []queued {
	var left []queued
	for key, l := range p.lanes {
		if l.busy {
			continue
		}
		left = l.items.take(left, l.items.len())
		if l.fails > 0 {
			p.failing--
		}
		delete(p.lanes, key)
	}
	p.ready.lanes, p.retrying.lanes, p.readyItems = p.ready.lanes[:0], p.retrying.lanes[:0], 0
	return left
}

// run sends one request and settles its items and lanes.
func (p *Producer) run(batch []queued, lanes []*lane, resend bool) {
	defer p.wg.Done()
	done, err := p.deliver(batch)
	p.settle(lanes, batch[done:], err, resend)
}

// deliver sends items and answers those it can: every item once stored, an item the broker
// refuses with its error, all of them after a final failure. A request refused with a 4xx
// other than 401 and 403 is split in two, sent one half after the other, which keeps each
// partition's order. It returns how many items, from the first, it answered: after a failure
// worth retrying (err) the rest are to be sent again.
func (p *Producer) deliver(items []queued) (done int, err error) {
	results, err := p.push(items)
	if err == nil {
		p.answer(items, results)
		return len(items), nil
	}
	if errors.Is(err, ErrOutcomeUnknown) {
		for i := range items {
			items[i].maybeStored = true
		}
	}
	if p.giveUp.Err() != nil {
		p.answerEach(items, func(q *queued) error { return closedError(context.Cause(p.giveUp), q.maybeStored) })
		return len(items), nil
	}
	switch p.failure(err, len(items)) {
	case splitRequest:
		half := len(items) / 2
		if n, err := p.deliver(items[:half]); n < half {
			return n, err
		}
		n, err := p.deliver(items[half:])
		return half + n, err
	case retryRequest:
		return 0, err
	}
	p.answerEach(items, func(q *queued) error { return q.finalError(err) })
	return len(items), nil
}

// sameLane reports whether items all belong to one (queue, partition).
func sameLane(items []queued) bool {
	for i := range items {
		if items[i].queue != items[0].queue || partitionName(items[i].item.Partition) != partitionName(items[0].item.Partition) {
			return false
		}
	}
	return true
}

func partitionName(p string) string {
	if p == "" {
		return "Default"
	}
	return p
}

// A failed request is sent again, split, or its items get the error.
type pushFailure int

const (
	finalFailure pushFailure = iota
	retryRequest
	splitRequest
)

// failure says what to do with a request of n items that failed with err.
func (p *Producer) failure(err error, n int) pushFailure {
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrInvalidOption) {
		return finalFailure
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		code := apiErr.StatusCode
		switch {
		case apiErr.Temporary():
			if p.c.http.RetryMax == 0 {
				return finalFailure
			}
			return retryRequest
		case code == http.StatusUnauthorized || code == http.StatusForbidden || code < 400 || n == 1:
			return finalFailure
		}
		return splitRequest
	}
	if p.c.http.RetryMax == 0 || permanentTransportError(err) {
		return finalFailure
	}
	return retryRequest
}

// push sends items in one request, made of their encodings. A request that carries several
// lanes is tried once: after a failure, each of its lanes is sent again alone, so the one at
// fault cannot hold back the others.
func (p *Producer) push(items []queued) ([]PushResult, error) {
	body := getBuffer()
	defer putBuffer(body)
	body.WriteString(pushBodyHead)
	for i := range items {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(items[i].enc)
	}
	body.WriteString(pushBodyTail)
	first := &items[0]
	return p.c.push(p.giveUp, affinityKey(first.queue, first.item.Partition, ""), body.Bytes(), len(items),
		make([]PushResult, 0, len(items)), func(i int) string { return items[i].transactionID(nil) }, !sameLane(items))
}

// settle ends a request: the items to send again go back to the front of their lanes, which
// start failing (or fail once more) and wait out a backoff; the other lanes are healthy again.
func (p *Producer) settle(lanes []*lane, again []queued, err error, resend bool) {
	p.mu.Lock()
	p.requests--
	if resend {
		p.resends--
	}
	for i := len(again) - 1; i >= 0; i-- {
		q := &again[i]
		l := p.lanes[laneKey{q.queue, partitionName(q.item.Partition)}]
		l.items.unshift(*q)
		l.failed = true
	}
	now := time.Now()
	var started, recovered bool
	var sick *lane
	for _, l := range lanes {
		l.busy = false
		if l.failed {
			l.failed = false
			l.fails++
			if l.fails == 1 {
				p.failing++
				started = started || p.failing == 1
				sick = l
			}
			// After a request of several lanes, which one is at fault is not known: each is sent
			// again at once, alone, with the transport's retries; after its own, it waits.
			l.retryAt = now
			if len(lanes) == 1 {
				l.retryAt = now.Add(transportBackoff(p.c.http.RetryWaitMin, p.c.http.RetryWaitMax).wait(l.fails))
			}
			heap.Push(&p.retrying, l)
			continue
		}
		if l.fails > 0 {
			l.fails = 0
			p.failing--
			recovered = recovered || p.failing == 0 && p.giveUp.Err() == nil
		}
		if l.items.len() == 0 {
			delete(p.lanes, l.key)
			continue
		}
		heap.Push(&p.ready, l)
		p.readyItems += l.items.len()
	}
	waiting := len(p.room)
	p.mu.Unlock()
	clear(again)
	switch {
	case started:
		p.c.logger.Warn("queen: Producer pushes are failing; their items are kept and sent again",
			"queue", sick.key.queue, "partition", sick.key.partition, "waiting", waiting, "error", err)
	case recovered:
		p.c.logger.Warn("queen: Producer pushes succeed again", "waiting", waiting)
	}
	p.poke()
}

// answer reports stored items with their results.
func (p *Producer) answer(items []queued, results []PushResult) {
	p.report(items, func(i int) (PushResult, error) { return results[i], nil })
}

// answerEach reports items that failed, each with its own error.
func (p *Producer) answerEach(items []queued, errOf func(q *queued) error) {
	p.report(items, func(i int) (PushResult, error) {
		q := &items[i]
		return PushResult{TransactionID: q.transactionID(nil), Offset: -1}, errOf(q)
	})
}

// report hands items' outcomes to OnResult (with none, a failure is logged, one line for
// them all), frees their room, and counts them answered.
func (p *Producer) report(items []queued, outcome func(i int) (PushResult, error)) {
	for range items {
		<-p.room // first, so an OnResult that calls Send never waits on its own request
	}
	if p.onResult != nil {
		for i := range items {
			res, err := outcome(i)
			q := &items[i]
			q.item.TransactionID = q.transactionID(&res)
			p.callOnResult(q.queue, q.item, res, err)
		}
	} else if _, err := outcome(0); err != nil { // one line for the items, not one per item
		p.c.logger.Warn("queen: Producer could not push items", "items", len(items),
			"queue", items[0].queue, "transactionId", items[0].transactionID(nil), "error", err)
	}
	p.mu.Lock()
	for i := range items {
		e := items[i].epoch
		if p.unanswered[e]--; p.unanswered[e] == 0 {
			delete(p.unanswered, e)
		}
	}
	if p.answered != nil {
		close(p.answered)
		p.answered = nil
	}
	p.mu.Unlock()
}

// callOnResult hands one item's outcome to OnResult. A panic in OnResult is logged, so the
// other items still get theirs.
func (p *Producer) callOnResult(queue string, item PushItem, res PushResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			p.c.logger.Error("queen: Producer OnResult panicked", "queue", queue,
				"transactionId", item.TransactionID, "panic", v)
		}
	}()
	p.onResult(queue, item, res, err)
}

// closedError is the final error of an item Close gave up on; maybeStored tells whether a
// request carrying it may have reached the broker without an answer.
func closedError(cause error, maybeStored bool) error {
	if maybeStored {
		return &wrapped{msg: fmt.Sprintf("queen: Producer closed before the push was answered (%v): the item may have been stored", cause),
			errs: []error{ErrClosed, ErrOutcomeUnknown}}
	}
	return &wrapped{msg: fmt.Sprintf("queen: Producer closed before the item was sent (%v)", cause),
		errs: []error{ErrClosed}}
}

// laneKey is an item's (queue, partition); "" and "Default" are one partition.
type laneKey struct{ queue, partition string }

// queued is one accepted item.
type queued struct {
	seq         uint64
	epoch       uint64
	at          time.Time // when Send accepted it
	queue       string
	item        PushItem
	enc         []byte // its JSON object in a push body
	idAt        int    // where the transactionId made for it starts in enc; -1: its own
	maybeStored bool   // a request carrying it may have reached the broker without an answer
}

// transactionID is the item's transactionId: the result's, its own, or the one made for it.
func (q *queued) transactionID(res *PushResult) string {
	switch {
	case res != nil && res.TransactionID != "":
		return res.TransactionID
	case q.idAt < 0:
		return q.item.TransactionID
	}
	return string(q.enc[q.idAt : q.idAt+idLen])
}

// finalError is the error OnResult gets for the item after err, the last failure of a
// request that carried it: one that may have been stored says so.
func (q *queued) finalError(err error) error {
	if q.maybeStored && !errors.Is(err, ErrOutcomeUnknown) {
		return &outcomeUnknownError{method: http.MethodPost, path: route.Push.Path(), err: err}
	}
	return err
}

// lane is the items of one (queue, partition) not yet answered, in Send order. At most one
// request carries some of them at a time.
type lane struct {
	key     laneKey
	items   itemQueue // not in a request, in Send order
	busy    bool      // a request carries some of its items
	failed  bool      // the request that carried them failed: they are to be sent again
	fails   int       // requests failed in a row; a failing lane is sent alone
	retryAt time.Time // when a failing lane is sent again
}

// laneHeap orders lanes: waiting ones by their oldest item, failing ones by the end of their
// backoff.
type laneHeap struct {
	lanes   []*lane
	byRetry bool
}

func (h laneHeap) Len() int { return len(h.lanes) }

func (h laneHeap) Less(i, j int) bool {
	if h.byRetry {
		return h.lanes[i].retryAt.Before(h.lanes[j].retryAt)
	}
	return h.lanes[i].items.at(0).seq < h.lanes[j].items.at(0).seq
}

func (h laneHeap) Swap(i, j int) { h.lanes[i], h.lanes[j] = h.lanes[j], h.lanes[i] }

func (h *laneHeap) Push(x any) { h.lanes = append(h.lanes, x.(*lane)) }

func (h *laneHeap) Pop() any {
	last := h.lanes[len(h.lanes)-1]
	h.lanes[len(h.lanes)-1] = nil
	h.lanes = h.lanes[:len(h.lanes)-1]
	return last
}
