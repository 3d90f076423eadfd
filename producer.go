package queen

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// Producer defaults, used where a ProducerConfig field is zero.
const (
	defaultLinger      = 5 * time.Millisecond
	defaultMaxBatch    = 500
	defaultMaxBuffered = 10000

	// producerLanes is how many push requests a Producer keeps in flight. Items of one
	// (queue, partition) always share a lane, and a lane sends one request at a time, so they
	// are stored in Send order, retries included. One measured best (BenchmarkProducer, 1 to 8
	// lanes, also with pushes delayed 2ms): a lane's requests fill up to MaxBatch only as fast
	// as its share of the items arrives, so more lanes send more, smaller requests, and the
	// work per item, not the wait for answers, bounds the throughput.
	producerLanes = 1

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
	// filled in. It runs on the Producer's goroutines, for one request's items in Send order:
	// keep it short, and do not call Flush or Close from it. Nil: final errors are logged with
	// the client's logger, one line per request.
	OnResult func(queue string, item PushItem, res PushResult, err error)
}

// Producer publishes items in the background, gathered into few large requests: the fast way
// to push many small messages. Items of any queue and partition share requests; items of one
// (queue, partition) are stored in the order Send accepted them. Every item gets a
// transactionId before it is first sent (a client-made UUIDv7 when it has none), so a
// request retried after a lost answer is deduplicated by the broker and nothing is stored
// twice. A request that fails with a connection error, 429 or 5xx is sent again, after the
// client's backoff (WithRetry), until it is answered or Close gives up; WithRetry(0, ...)
// makes the first failure final. Nothing accepted is dropped silently: OnResult reports each
// item once. A Producer is safe for concurrent use. Close it when done (Client.Close closes it
// too, giving it 10 seconds to flush).
type Producer struct {
	c        *Client
	linger   time.Duration
	maxBatch int
	onResult func(queue string, item PushItem, res PushResult, err error)

	room     chan struct{} // one token per accepted, unanswered item
	lanes    []*lane
	inFlight atomic.Int32 // push requests sent and not yet answered

	mu      sync.RWMutex // Send holds it shared while adding an item; Close takes it to refuse more
	closed  atomic.Bool
	closing chan struct{} // closed by Close: a Send waiting for room returns ErrClosed

	giveUp    context.Context // ends when Close's ctx ended first: retries stop, the rest fail
	abandon   context.CancelCauseFunc
	stopOnce  sync.Once
	wg        sync.WaitGroup
	finish    func() // unregisters from the client
	closeDone chan struct{}
}

// NewProducer starts a Producer that publishes through c. It validates cfg (an error wrapping
// ErrInvalidOption names the field) and returns ErrClosed on a closed Client.
func (c *Client) NewProducer(cfg ProducerConfig) (*Producer, error) {
	return c.newProducer(cfg, producerLanes)
}

func (c *Client) newProducer(cfg ProducerConfig, lanes int) (*Producer, error) {
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
		closing: make(chan struct{}), closeDone: make(chan struct{})}
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
	p.lanes = make([]*lane, lanes)
	for i := range p.lanes {
		p.lanes[i] = &lane{p: p, wake: make(chan struct{}, 1)}
	}
	p.wg.Add(len(p.lanes))
	for _, l := range p.lanes {
		go l.run()
	}
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
	if p.closed.Load() || p.c.isClosed() {
		return ErrClosed
	}
	if err := checkNameField("queue", queue); err != nil {
		return err
	}
	w, err := encodePushItem("item", -1, queue, "", item)
	if err != nil {
		return err
	}
	item.TransactionID = w.TransactionID
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
	p.mu.RLock()
	if p.closed.Load() {
		p.mu.RUnlock()
		<-p.room
		return ErrClosed
	}
	stuck := p.stuck()
	p.lanes[laneIndex(w.Queue, w.Partition, len(p.lanes))].add(queue, item, w, stuck)
	p.mu.RUnlock()
	if stuck {
		for _, l := range p.lanes {
			l.poke()
		}
	}
	return nil
}

// stuck reports whether the buffer is full with no request in flight: no answer will make room,
// so no more items can come, and lingering would only wait.
func (p *Producer) stuck() bool {
	return len(p.room) == cap(p.room) && p.inFlight.Load() == 0
}

// Flush sends what is buffered without waiting for Linger and returns nil once every item
// accepted before the call is answered (its OnResult has returned, with a result or an error),
// or ctx's error when ctx ends first.
func (p *Producer) Flush(ctx context.Context) error {
	targets := make([]uint64, len(p.lanes))
	for i, l := range p.lanes {
		targets[i] = l.flushUpTo()
	}
	for i, l := range p.lanes {
		if err := l.waitAnswered(ctx, targets[i]); err != nil {
			return err
		}
	}
	return nil
}

// Close refuses new items (Send returns ErrClosed), flushes, stops the Producer and returns
// nil once every accepted item is answered. When ctx ends first, it stops retrying, reports
// every unanswered item to OnResult with an error wrapping ErrClosed (and ErrOutcomeUnknown
// for an item whose request was sent but not answered: it may be stored), and returns ctx's
// error. Close is idempotent.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed.Load() {
		p.closed.Store(true)
		close(p.closing)
	}
	p.mu.Unlock()
	err := p.Flush(ctx)
	if err != nil {
		p.abandon(err)
	}
	p.stopOnce.Do(func() {
		for _, l := range p.lanes {
			l.stop()
		}
		p.wg.Wait()
		close(p.closeDone)
	})
	<-p.closeDone
	return err
}

// report hands one item's outcome to OnResult. A panic in OnResult is logged, so the other
// items still get theirs.
func (p *Producer) report(queue string, item PushItem, res PushResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			p.c.logger.Error("queen: Producer OnResult panicked", "queue", queue,
				"transactionId", item.TransactionID, "panic", v)
		}
	}()
	p.onResult(queue, item, res, err)
}

// retryable reports whether a failed push request is worth sending again.
func (p *Producer) retryable(err error) bool {
	if p.c.http.RetryMax == 0 || errors.Is(err, ErrClosed) || errors.Is(err, ErrInvalidOption) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Temporary()
	}
	return !permanentTransportError(err)
}

// closedError is the final error of an item Close gave up on; sent tells whether its request
// had left, so the broker may have stored it.
func closedError(cause error, sent bool) error {
	if sent {
		return fmt.Errorf("queen: Producer closed before the push was answered (%v): %w: %w",
			cause, ErrClosed, ErrOutcomeUnknown)
	}
	return fmt.Errorf("queen: Producer closed before the item was sent (%v): %w", cause, ErrClosed)
}

// laneIndex maps a (queue, partition) to its lane; "" and "Default" are one partition.
func laneIndex(queue, partition string, lanes int) int {
	if partition == "" {
		partition = "Default"
	}
	h := maphash.Comparable(laneSeed, laneKey{queue, partition})
	return int(h % uint64(lanes))
}

// laneSeed keys laneIndex's hash for the life of the process.
var laneSeed = maphash.MakeSeed()

// laneKey is what picks an item's lane.
type laneKey struct{ queue, partition string }

// queued is one accepted item.
type queued struct {
	seq   uint64
	at    time.Time // when Send accepted it
	queue string
	item  PushItem
	wire  wire.PushItem
}

// lane sends, one request at a time, the items of the (queue, partition)s that map to it.
type lane struct {
	p    *Producer
	wake chan struct{} // buffered 1: something changed that the run loop should see

	mu       sync.Mutex
	items    itemQueue // accepted, not yet sent, in Send order
	accepted uint64    // seq of the last accepted item
	answered uint64    // every item up to this seq is answered
	flushTo  uint64    // items up to this seq go without lingering
	stopped  bool      // no more items will come
	changed  chan struct{}
}

func (l *lane) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *lane) add(queue string, item PushItem, w wire.PushItem, stuck bool) {
	l.mu.Lock()
	l.accepted++
	l.items.push(queued{seq: l.accepted, at: time.Now(), queue: queue, item: item, wire: w})
	// The run loop needs waking when it waits with nothing to do, or when a request is full.
	wake := l.items.len() == 1 || l.items.len() == l.p.maxBatch || stuck
	l.mu.Unlock()
	if wake {
		l.poke()
	}
}

func (l *lane) flushUpTo() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flushTo < l.accepted {
		l.flushTo = l.accepted
		l.poke()
	}
	return l.accepted
}

func (l *lane) waitAnswered(ctx context.Context, seq uint64) error {
	for {
		l.mu.Lock()
		if l.answered >= seq {
			l.mu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *lane) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.poke()
}

// run sends the lane's items until the Producer stops.
func (l *lane) run() {
	defer l.p.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var batch []queued
	for {
		l.mu.Lock()
		n := l.items.len()
		if n == 0 && l.stopped {
			l.mu.Unlock()
			return
		}
		if n > 0 && l.p.giveUp.Err() != nil {
			batch = l.items.take(batch[:0], n)
			l.mu.Unlock()
			l.answer(batch, nil, closedError(context.Cause(l.p.giveUp), false))
			continue
		}
		var wait time.Duration
		if n > 0 && n < l.p.maxBatch && l.flushTo < l.items.at(0).seq && !l.stopped && !l.p.stuck() {
			wait = l.p.linger - time.Since(l.items.at(0).at)
		}
		if n == 0 || wait > 0 {
			l.mu.Unlock()
			var expired <-chan time.Time
			if n > 0 {
				timer.Reset(wait)
				expired = timer.C
			}
			var gaveUp <-chan struct{}
			if l.p.giveUp.Err() == nil {
				gaveUp = l.p.giveUp.Done()
			}
			select {
			case <-l.wake:
			case <-expired:
			case <-gaveUp:
			}
			timer.Stop()
			continue
		}
		k := requestLen(n, l.p.maxBatch, func(i int) int { return pushItemSize(&l.items.at(i).wire) })
		batch = l.items.take(batch[:0], k)
		l.mu.Unlock()
		l.send(batch)
	}
}

// send pushes one request, again after each temporary failure, and answers its items.
func (l *lane) send(batch []queued) {
	wires := make([]wire.PushItem, len(batch))
	for i := range batch {
		wires[i] = batch[i].wire
	}
	affinity := affinityKey(wires[0].Queue, wires[0].Partition, "")
	l.p.inFlight.Add(1)
	done := func(results []PushResult, err error) {
		l.p.inFlight.Add(-1) // before the answer makes room, so the Sends it lets in see it
		l.answer(batch, results, err)
	}
	for attempt := 0; ; attempt++ {
		results, err := l.p.c.pushChunk(l.p.giveUp, affinity, wires)
		switch {
		case err == nil:
			done(results, nil)
			return
		case l.p.giveUp.Err() != nil:
			done(nil, closedError(context.Cause(l.p.giveUp), true))
			return
		case !l.p.retryable(err):
			done(nil, err)
			return
		}
		l.p.c.logger.Debug("queen: Producer push failed, sending it again", "items", len(wires),
			"attempt", attempt+1, "error", err)
		wait := time.NewTimer(transportBackoff(l.p.c.http.RetryWaitMin, l.p.c.http.RetryWaitMax).wait(attempt + 1))
		select {
		case <-wait.C:
		case <-l.p.giveUp.Done():
		}
		wait.Stop()
	}
}

// answer reports a request's items, frees their room and moves the lane's answered mark.
func (l *lane) answer(batch []queued, results []PushResult, err error) {
	for range batch {
		<-l.p.room // first, so an OnResult that calls Send never waits on its own request
	}
	if l.p.onResult == nil {
		if err != nil { // one line for the request, not one per item
			l.p.c.logger.Warn("queen: Producer could not push items", "items", len(batch),
				"queue", batch[0].queue, "transactionId", batch[0].wire.TransactionID, "error", err)
		}
	} else {
		for i := range batch {
			q := &batch[i]
			var res PushResult
			if err == nil {
				res = results[i]
			} else {
				res = PushResult{TransactionID: q.wire.TransactionID, Offset: -1}
			}
			l.p.report(q.queue, q.item, res, err)
		}
	}
	last := batch[len(batch)-1].seq
	clear(batch) // drop the references before the batch slice is reused
	l.mu.Lock()
	l.answered = last
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	l.mu.Unlock()
}
