package queen

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// chaosSeedEnv names the variable that replays a chaos run: QUEEN_CHAOS_SEED=<seed>.
const chaosSeedEnv = "QUEEN_CHAOS_SEED"

// chaosSeed is the run's seed: QUEEN_CHAOS_SEED when set, else a fresh one. It is logged, so a
// failing run can be replayed.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(chaosSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: not an unsigned integer: %v", chaosSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("chaos seed %d (replay: %s=%d go test -race -run '%s' .)", seed, chaosSeedEnv, seed, t.Name())
	return seed
}

// mix derives a stream of the seed for one key, so that each request route and each delivery
// draws its faults from its own sequence: the nth request of a route and the kth delivery of a
// message meet the same fault on every run of a seed, however goroutines interleave.
func mix(seed uint64, key ...any) *rand.Rand {
	h := fnv.New64a()
	for _, k := range key {
		fmt.Fprint(h, k, "\x00")
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// transportFaults are the rates, each from 0 to 1, at which the broker's faults break a request.
type transportFaults struct {
	errorBefore float64 // 500, 502 or 503 before the broker sees the request
	lostAnswer  float64 // the broker applied it; the client gets a 503 instead of the answer
	dropBefore  float64 // the connection is closed before the broker sees the request
	dropAfter   float64 // the broker applied it; the connection is closed instead of the answer
}

func (f transportFaults) String() string {
	return fmt.Sprintf("5xx-before=%.2f lost-answer=%.2f drop-before=%.2f drop-after=%.2f",
		f.errorBefore, f.lostAnswer, f.dropBefore, f.dropAfter)
}

// chaosRoutes are the routes the consume loop sends; each draws its faults from its own stream.
var chaosRoutes = []string{"pop", "ack", "extend"}

// chaosScheduleLength is how many requests of each route the armed schedule covers; a scenario
// sends far fewer, so its faults last until verify clears them.
const chaosScheduleLength = 1500

// armTransportFaults arms on srv, for each route, the seed's schedule of faults at the given
// rates: the nth request of a route meets the same fault on every run of a seed, however
// goroutines interleave. It returns how many faults of each kind it armed.
func armTransportFaults(srv *queentest.Server, seed uint64, rates transportFaults) map[string]int {
	armed := map[string]int{}
	streams := make([]*rand.Rand, len(chaosRoutes))
	passes := make([]int, len(chaosRoutes)) // requests let through since the last fault
	for i, route := range chaosRoutes {
		streams[i] = mix(seed, "route", route)
	}
	// Routes take turns, so each route's next fault is near the front of the armed list.
	for range chaosScheduleLength {
		for i, route := range chaosRoutes {
			rng := streams[i]
			x, status := rng.Float64(), []int{500, 502, 503}[rng.IntN(3)]
			var f queentest.Fault
			kind := ""
			for _, c := range []struct {
				rate  float64
				kind  string
				fault queentest.Fault
			}{
				{rates.errorBefore, "5xx-before", queentest.Fault{Status: status}},
				{rates.lostAnswer, "lost-answer", queentest.Fault{After: true, Status: http.StatusServiceUnavailable}},
				{rates.dropBefore, "drop-before", queentest.Fault{Drop: true}},
				{rates.dropAfter, "drop-after", queentest.Fault{After: true}},
			} {
				if x < c.rate {
					f, kind = c.fault, c.kind
					break
				}
				x -= c.rate
			}
			if kind == "" {
				passes[i]++
				continue
			}
			if passes[i] > 0 {
				srv.Fail(queentest.Fault{Route: route, Times: passes[i]})
				passes[i] = 0
			}
			f.Route = route
			srv.Fail(f)
			armed[kind]++
		}
	}
	return armed
}

// The chaos rig runs the real consume loop against the reference broker, with srv.Fail faults,
// with handlers that fail, panic, retry or outlive their lease, and checks that nothing is
// lost: every message is completed at least once by every group, each partition's first
// completions come in offset order, nothing is left for any group, and the dead letters are
// exactly the poison messages.

const (
	chaosLease      = 30 * time.Second // the queue's lease, on the broker's manual clock
	chaosRetryLimit = 3
	chaosNamespace  = "chaos-ns"
	chaosTask       = "chaos-task"
	chaosPoll       = 100 * time.Millisecond // long-poll length of each pop
	chaosIdle       = 150 * time.Millisecond // a round ends after this long with nothing to do
	chaosMaxRounds  = 60
	// stallCap bounds how long a stalled handler waits for its message to be redelivered to
	// another worker; with every worker stalled, nobody can redeliver it.
	stallCap = 100 * time.Millisecond
	// chaosTimeout bounds a whole scenario. The loop's own backoffs run on real time, and
	// under a fault rate this high they come in runs: an ack whose answers are lost five times
	// in a row waits 3 s before its sixth try, four failed pops in a row hold pops back for
	// nearly 4 s, and the rounds add them up. A scenario typically takes 2–14 s; the bound
	// leaves room for an unlucky draw without letting a scenario that makes no progress hang.
	chaosTimeout = 3 * testutil.Timeout
)

// handlerFaults are the rates, each from 0 to 1, at which a delivery meets a faulty handler,
// and the share of messages that are poison.
type handlerFaults struct {
	fail  float64 // returns an error (only while the retry budget cannot run out)
	panic float64 // panics (same)
	retry float64 // returns Retry(err)
	stall float64 // outlives its lease (and every other live one), then completes
	// poison messages are never completed: half return DeadLetter(err), half always panic.
	poison float64
}

func (f handlerFaults) String() string {
	return fmt.Sprintf("fail=%.2f panic=%.2f retry=%.2f stall=%.2f poison=%.2f",
		f.fail, f.panic, f.retry, f.stall, f.poison)
}

type handlerFault int

const (
	handlerOK handlerFault = iota
	handlerFails
	handlerPanics
	handlerRetries
	handlerStalls
)

// chaosConfig is one scenario.
type chaosConfig struct {
	partitions, perPartition int
	groups                   []string // one Consume each; "" is queue mode; a name twice competes
	concurrency              int
	batch                    int  // 0: autopilot sizes the pops
	batchHandler             bool // a BatchHandler instead of a Handler
	manualAck                bool // AutoAck(false): the handler acks with m.Ack and returns nil
	discovery                bool // pop by namespace and task instead of by queue
	tune                     func(QueueBuilder) QueueBuilder
	transport                transportFaults
	handler                  handlerFaults
	retries                  int // the client's WithRetry
	// newClients: the scenario replaces its client mid-run. On 0.15 a new client knows
	// nothing of a partition's shared retry counter, spent by the old one's failures, so a
	// message a handler refused can be filed by its next failure; see verify.
	newClients bool
}

// key names one message for one group.
type key struct{ group, tx string }

// chaosRig is a broker with its faults armed, the pushed messages and what the handlers saw.
//
// The checks are the same in both broker modes, because they rest on what the rig itself
// knows: a message's place in its partition is its push order (its transactionId names it,
// and 0.15 sends no offset), and a delivery's attempt is the rig's own count of handler calls
// for (group, message) on 0.15, which sends no deliveryAttempt.
type chaosRig struct {
	t      *testing.T
	mode   testmode.Mode
	seed   uint64
	cfg    chaosConfig
	queue  string
	srv    *queentest.Server
	direct *Client // setup before the faults are armed, and checks once they are cleared
	armed  map[string]int

	index  map[string]int    // transactionId → offset in its partition
	part   map[string]string // transactionId → partition
	poison map[string]bool   // transactionId → true: DeadLetter, false: panic
	// spentBudget015 holds, on 0.15, the messages right after a poison one: 0.15 keeps a
	// partition's spent retry counter after a dead letter, so such a message's first
	// failure files it too, a loss no client can prevent; the rig fails none of them there.
	spentBudget015 map[string]bool

	mu          sync.Mutex
	completed   map[key]int
	firsts      map[key][]int // (group, partition) → offsets in the order of first completion
	deliveries  int
	completions int
	attempts    map[key]int // (group, message) → handler calls so far
	faults      map[handlerFault]int
	refused     map[key]bool // (group, message) → a handler failed, panicked or retried it
	waiters     map[key][]redeliveryWaiter
	trigger     *completionTrigger
}

type redeliveryWaiter struct {
	attempt int
	ch      chan struct{}
}

// completionTrigger closes fire once every group has completed at least `at` messages.
type completionTrigger struct {
	at   int
	fire *closeOnce
}

func newChaosRig(t *testing.T, mode testmode.Mode, seed uint64, cfg chaosConfig) *chaosRig {
	t.Helper()
	if len(cfg.groups) == 0 {
		cfg.groups = []string{""}
	}
	srv := mode.Server(t, queentest.WithManualClock())
	seed = mix(seed, t.Name()).Uint64() // each scenario draws its own faults
	r := &chaosRig{t: t, mode: mode, seed: seed, cfg: cfg, queue: "chaos", srv: srv,
		direct: newTestClient(t, srv.URL()),
		index:  map[string]int{}, part: map[string]string{}, poison: map[string]bool{},
		spentBudget015: map[string]bool{}, completed: map[key]int{}, firsts: map[key][]int{}, faults: map[handlerFault]int{},
		attempts: map[key]int{}, refused: map[key]bool{}, waiters: map[key][]redeliveryWaiter{}}
	require.NoError(t, r.direct.Do(t.Context(), http.MethodPost, "/api/v1/configure", nil, map[string]any{
		"queue": r.queue, "namespace": chaosNamespace, "task": chaosTask,
		"options": map[string]any{"retryLimit": chaosRetryLimit, "leaseTime": int(chaosLease / time.Second)},
	}, nil))
	pick := mix(seed, "poison")
	for p := range cfg.partitions {
		name := fmt.Sprintf("p%02d", p)
		pushN(t, r.direct, r.queue, name, cfg.perPartition)
		for i := range cfg.perPartition {
			tx := fmt.Sprintf("%s-%d", name, i)
			r.index[tx], r.part[tx] = i, name
			if pick.Float64() < cfg.handler.poison {
				r.poison[tx] = pick.IntN(2) == 0
			}
			if _, after := r.poison[fmt.Sprintf("%s-%d", name, i-1)]; after && mode.V015 {
				r.spentBudget015[tx] = true
			}
		}
	}
	r.armed = armTransportFaults(srv, seed, cfg.transport)
	t.Logf("%d partitions × %d messages, groups %q, concurrency %d, batch %d, batch handler %v",
		cfg.partitions, cfg.perPartition, cfg.groups, cfg.concurrency, cfg.batch, cfg.batchHandler)
	t.Logf("transport faults: %v; client retries %d", cfg.transport, cfg.retries)
	t.Logf("handler faults: %v; poison messages %v", cfg.handler, slices.Sorted(maps.Keys(r.poison)))
	return r
}

// client is a consuming client of the faulty broker; Close runs at cleanup.
func (r *chaosRig) client() *Client {
	return newTestClient(r.t, r.srv.URL(), WithRetry(r.cfg.retries, time.Millisecond, 5*time.Millisecond))
}

// fault is the seed's choice for one delivery of a message to a group. Failures and panics
// strike only while the message cannot spend its whole retry budget on them, so only poison
// messages are dead-lettered.
func (r *chaosRig) fault(group string, m *Message, attempt int) handlerFault {
	f := r.cfg.handler
	x := mix(r.seed, "handler", group, m.TransactionID, attempt).Float64()
	// The broker has handed m out at least attempt times, and only failures spend the budget.
	budget := attempt <= chaosRetryLimit && !r.spentBudget015[m.TransactionID]
	switch {
	case x < f.fail:
		if budget {
			return handlerFails
		}
	case x < f.fail+f.panic:
		if budget {
			return handlerPanics
		}
	case x < f.fail+f.panic+f.retry:
		return handlerRetries
	case x < f.fail+f.panic+f.retry+f.stall:
		return handlerStalls
	}
	return handlerOK
}

// handle is the Handler of every scenario: it records the delivery, meets the seed's fault,
// and records a completion when it returns nil.
func (r *chaosRig) handle(ctx context.Context, group string, m *Message) error {
	attempt := r.delivered(group, m)
	if dead, ok := r.poison[m.TransactionID]; ok {
		if dead {
			return DeadLetter(errors.New("poison"))
		}
		panic("poison")
	}
	if err := r.meet(ctx, group, m, attempt); err != nil {
		return err
	}
	r.complete(group, m)
	if r.cfg.manualAck {
		// A lost or refused ack leaves the message to its lease, which brings it back.
		_ = m.Ack(ctx)
	}
	return nil
}

// handleBatch is the BatchHandler: the fault of the batch is its first message's.
func (r *chaosRig) handleBatch(ctx context.Context, group string, msgs []*Message) error {
	attempts := make([]int, len(msgs))
	for i, m := range msgs {
		attempts[i] = r.delivered(group, m)
	}
	if err := r.meet(ctx, group, msgs[0], attempts[0]); err != nil {
		return err
	}
	for _, m := range msgs {
		r.complete(group, m)
	}
	return nil
}

// meet acts out the fault the seed chose for this delivery.
func (r *chaosRig) meet(ctx context.Context, group string, m *Message, attempt int) error {
	f := r.fault(group, m, attempt)
	r.mu.Lock()
	r.faults[f]++
	if f == handlerFails || f == handlerPanics || f == handlerRetries {
		r.refused[key{group, m.TransactionID}] = true
	}
	r.mu.Unlock()
	switch f {
	case handlerFails:
		return errors.New("chaos: handler failed")
	case handlerPanics:
		panic("chaos: handler panicked")
	case handlerRetries:
		return Retry(errors.New("chaos: try again"))
	case handlerStalls:
		// The handler outlives its lease: the broker takes the partition back, another
		// worker may get it, and this one's ack must be refused.
		again := r.redelivered(group, m, attempt)
		r.srv.Advance(chaosLease + time.Second)
		select {
		case <-again:
		case <-ctx.Done():
		case <-time.After(stallCap):
		}
	}
	return nil
}

// delivered records a delivery and returns its attempt: the broker's deliveryAttempt, or on
// 0.15, which sends none, the rig's count of deliveries of m to group.
func (r *chaosRig) delivered(group string, m *Message) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries++
	k := key{group, m.TransactionID}
	r.attempts[k]++
	attempt := m.DeliveryAttempt
	if r.mode.V015 {
		attempt = r.attempts[k]
	}
	kept := r.waiters[k][:0]
	for _, w := range r.waiters[k] {
		if attempt > w.attempt {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	r.waiters[k] = kept
	return attempt
}

// redelivered is closed when m is delivered to group again, with a higher attempt.
func (r *chaosRig) redelivered(group string, m *Message, attempt int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan struct{})
	k := key{group, m.TransactionID}
	r.waiters[k] = append(r.waiters[k], redeliveryWaiter{attempt: attempt, ch: ch})
	return ch
}

func (r *chaosRig) complete(group string, m *Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.completions++
	k := key{group, m.TransactionID}
	r.completed[k]++
	if r.completed[k] > 1 {
		return
	}
	pk := key{group, r.part[m.TransactionID]}
	r.firsts[pk] = append(r.firsts[pk], r.index[m.TransactionID])
	if tr := r.trigger; tr != nil {
		for _, g := range r.cfg.groups {
			if r.uniqueLocked(g) < tr.at {
				return
			}
		}
		tr.fire.close()
	}
}

func (r *chaosRig) uniqueLocked(group string) int {
	n := 0
	for k := range r.completed {
		if k.group == group {
			n++
		}
	}
	return n
}

// armTrigger returns a channel closed once every group has completed `more` messages beyond
// what the slowest group has completed now.
func (r *chaosRig) armTrigger(more int) (<-chan struct{}, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	least := -1
	for _, g := range r.cfg.groups {
		if n := r.uniqueLocked(g); least < 0 || n < least {
			least = n
		}
	}
	at := least + more
	r.trigger = &completionTrigger{at: at, fire: newCloseOnce()}
	return r.trigger.fire.done(), at
}

// missing lists the non-poison messages some group has not completed.
func (r *chaosRig) missing() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for tx := range r.index {
		if _, bad := r.poison[tx]; bad {
			continue
		}
		for _, g := range r.cfg.groups {
			if r.completed[key{g, tx}] == 0 {
				out = append(out, missingName(g, tx))
			}
		}
	}
	sort.Strings(out)
	return out
}

// missingName names a message not completed by a group, as missing lists it.
func missingName(group, tx string) string { return fmt.Sprintf("%q/%s", group, tx) }

// consume runs one Consume of group on c, going idle after chaosIdle with nothing to do.
func (r *chaosRig) consume(ctx context.Context, c *Client, group string, tune func(QueueBuilder) QueueBuilder) error {
	b := c.Queue(r.queue)
	if r.cfg.discovery {
		// A discovery lease lasts 60s unless the pop says otherwise, whatever the queue's.
		b = c.Queue("").Namespace(chaosNamespace).Task(chaosTask).LeaseTime(chaosLease)
	}
	// Backoffs as short as the rounds: the suite is about what is lost, not when it comes back.
	b = b.Concurrency(r.cfg.concurrency).Timeout(chaosPoll).IdleTimeout(chaosIdle).
		RetryBackoff(time.Millisecond, 5*time.Millisecond)
	if group != "" {
		b = b.Group(group).SubscriptionMode(SubscribeAll)
	}
	if r.cfg.batch > 0 {
		b = b.Batch(r.cfg.batch)
	}
	if r.cfg.manualAck {
		b = b.AutoAck(false)
	}
	if r.cfg.tune != nil {
		b = r.cfg.tune(b)
	}
	if tune != nil {
		b = tune(b)
	}
	if r.cfg.batchHandler {
		return b.Consume(ctx, func(hctx context.Context, msgs []*Message) error {
			return r.handleBatch(hctx, group, msgs)
		})
	}
	return b.Each().Consume(ctx, func(hctx context.Context, m *Message) error {
		return r.handle(hctx, group, m)
	})
}

// round runs one Consume per group on c at once, until each goes idle or ctx is done, and
// returns their errors joined: every one should return nil. A Consume that outlives its ctx
// by testutil.Timeout fails the scenario rather than hanging the package's run.
func (r *chaosRig) round(ctx context.Context, c *Client, tune func(QueueBuilder) QueueBuilder) error {
	r.t.Helper()
	errs := make([]error, len(r.cfg.groups))
	var wg sync.WaitGroup
	for i, g := range r.cfg.groups {
		wg.Go(func() {
			if err := r.consume(ctx, c, g, tune); err != nil {
				errs[i] = fmt.Errorf("Consume of group %q: %w", g, err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		testutil.Recv(r.t, done, "a round's Consumes to return after their ctx ended")
	}
	return errors.Join(errs...)
}

// drive consumes until, after a round and with the clock past every lease, no group has
// anything left on the broker: whatever a lost answer or a dropped connection leased has come
// back and been completed (or, for poison, dead-lettered) by then.
func (r *chaosRig) drive(ctx context.Context, c *Client) (rounds int) {
	r.t.Helper()
	for rounds = 1; ; rounds++ {
		if rounds > chaosMaxRounds || ctx.Err() != nil {
			r.t.Fatalf("no end after %d rounds (%v); not completed: %v", rounds-1, ctx.Err(), r.missing())
		}
		require.NoError(r.t, r.round(ctx, c, nil))
		if ctx.Err() != nil {
			r.t.Fatalf("timed out in round %d; not completed: %v", rounds, r.missing())
		}
		r.srv.Advance(chaosLease + time.Second)
		if r.finished() {
			return rounds
		}
	}
}

// finished reports whether every group has finished the queue: nothing after its cursors
// (with the clock past every lease, nothing is leased either).
func (r *chaosRig) finished() bool {
	for _, g := range r.cfg.groups {
		if r.srv.Lag(r.queue, g) != 0 {
			return false
		}
	}
	return true
}

// verify checks the outcome once the broker has nothing left to deliver.
func (r *chaosRig) verify(ctx context.Context, rounds int) {
	t := r.t
	t.Helper()
	r.srv.ClearFaults()
	missing := r.missing()

	r.mu.Lock()
	for k, offsets := range r.firsts {
		assert.True(t, slices.IsSorted(offsets) && !hasRepeats(offsets),
			"group %q partition %s: first completions out of offset order: %v", k.group, k.tx, offsets)
	}
	unique := len(r.completed)
	dups := r.completions - unique
	faults := maps.Clone(r.faults)
	deliveries := r.deliveries
	r.mu.Unlock()

	// Nothing is left for any group, even with every lease run out.
	r.srv.Advance(chaosLease + time.Second)
	for _, g := range r.cfg.groups {
		b := r.direct.Queue(r.queue).Batch(10000).Partitions(64)
		if g != "" {
			b = b.Group(g)
		}
		msgs, err := b.Pop(ctx)
		require.NoError(t, err)
		var left []string
		for _, m := range msgs {
			left = append(left, m.TransactionID)
		}
		assert.Empty(t, left, "group %q: messages left on the broker", g)
	}

	// The dead letters are the poison messages, once per group. On 0.15 a scenario that
	// replaces its client may also file a message its handler refused: the broker counts
	// failures per partition, and the new client cannot know what the old one spent.
	want := map[key]int{}
	for tx := range r.poison {
		for _, g := range r.cfg.groups {
			want[key{groupName(g), tx}] = 1
		}
	}
	got := map[key]int{}
	for _, d := range r.deadLetters(ctx) {
		got[key{groupName(d.ConsumerGroup), d.TransactionID}]++
	}
	if r.mode.V015 && r.cfg.newClients {
		r.mu.Lock()
		for k := range got {
			if _, poison := r.poison[k.tx]; poison {
				continue
			}
			g := k.group
			if g == "__QUEUE_MODE__" {
				g = ""
			}
			if assert.True(t, r.refused[key{g, k.tx}], "group %q: %s filed though no handler ever refused it", k.group, k.tx) {
				t.Logf("filed by a counter an earlier client spent: %s of group %q", k.tx, k.group)
				delete(got, k)
				// Filed, so never completed: it is accounted for by its dead letter.
				missing = slices.DeleteFunc(missing, func(m string) bool { return m == missingName(g, k.tx) })
			}
		}
		r.mu.Unlock()
	}
	assert.Equal(t, want, got, "dead letters (group, transactionId) → count")
	assert.Empty(t, missing, "every message is completed at least once by every group, or filed as above")

	injected := r.srv.FaultsMet()
	assert.Positive(t, injected, "requests met the armed faults")
	t.Logf("rounds %d; deliveries %d; completions %d of %d unique (group, message); duplicates %d (%.1f%%)",
		rounds, deliveries, r.completions, unique, dups, 100*float64(dups)/float64(max(unique, 1)))
	t.Logf("requests that met a fault: %d; armed: %v", injected, r.armed)
	t.Logf("handler faults: fail=%d panic=%d retry=%d stall=%d; dead letters %d",
		faults[handlerFails], faults[handlerPanics], faults[handlerRetries], faults[handlerStalls], len(got))
}

func hasRepeats(sorted []int) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// groupName is a group as the DLQ names it: queue mode is __QUEUE_MODE__.
func groupName(g string) string {
	if g == "" || g == "__QUEUE_MODE__" {
		return "__QUEUE_MODE__"
	}
	return g
}

type chaosDeadLetter struct {
	TransactionID string `json:"transactionId"`
	ConsumerGroup string `json:"consumerGroup"`
	ErrorMessage  string `json:"errorMessage"`
}

func (r *chaosRig) deadLetters(ctx context.Context) []chaosDeadLetter {
	var page struct {
		Messages []chaosDeadLetter `json:"messages"`
	}
	q := url.Values{"queue": {r.queue}, "limit": {"10000"}}
	require.NoError(r.t, r.direct.Do(ctx, "GET", "/api/v1/dlq", q, nil, &page))
	for _, d := range page.Messages {
		if !strings.Contains(d.ErrorMessage, "poison") {
			// verify decides whether such a dead letter is allowed; its error says why it came.
			r.t.Logf("dead letter %s of group %q: %q", d.TransactionID, d.ConsumerGroup, d.ErrorMessage)
		}
	}
	return page.Messages
}
