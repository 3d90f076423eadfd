package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A refused renewal loses the batch: the handler's ctx is cancelled with cause ErrLeaseLost,
// nothing of the batch is acked, OnError hears ErrLeaseLost with the batch's first message, the
// LeaseLost hooks get the batch (a LeaseLost hook that panics before them changes nothing),
// Handled reports the message with no outcome, and the broker delivers it again.
func TestARefusedRenewalLosesTheBatch(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv := mode.Server(t, queentest.WithManualClock())
		spy, url := testutil.NewSpy(t, srv.Handler())
		c := newTestClient(t, url)
		var rec hookLog
		c.hooks.add(Hooks{LeaseLost: func(LeaseLostEvent) { panic("lease hook") }})
		c.hooks.add(rec.hooks())
		clock, renewed := useManualClock(c)
		pushN(t, c, "lost", "p", 1)

		started := make(chan struct{}, 1)
		causes := make(chan error, 1)
		var calls atomic.Int32
		var reported errorLog
		done := testutil.Go(func() error {
			return c.Queue("lost").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(2).
				OnError(reported.record).Each().
				Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
					if calls.Add(1) > 1 {
						return nil
					}
					started <- struct{}{}
					<-ctx.Done()
					causes <- context.Cause(ctx)
					return ctx.Err()
				})
		})
		testutil.Recv(t, started, "the handler")
		srv.Advance(time.Hour) // the broker expires the lease
		clock.Advance(5 * time.Second)
		assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
		assert.ErrorIs(t, testutil.Recv(t, causes, "the handler's ctx"), ErrLeaseLost)
		require.NoError(t, testutil.Recv(t, done, "Consume"))

		assert.EqualValues(t, 2, calls.Load(), "delivered again")
		assert.Len(t, spy.Of(route.FamilyAck), 1, "only the redelivery was acked")
		msgs, errs := reported.all()
		lost := slices.IndexFunc(errs, func(err error) bool { return errors.Is(err, ErrLeaseLost) })
		require.GreaterOrEqual(t, lost, 0, "OnError heard of the loss: %v", errs)
		assert.Equal(t, "p-0", msgs[lost].TransactionID)

		rec.mu.Lock()
		defer rec.mu.Unlock()
		require.Len(t, rec.leaseLost, 1)
		assert.Equal(t, "lost", rec.leaseLost[0].Queue)
		require.Len(t, rec.leaseLost[0].Messages, 1)
		assert.Equal(t, rec.leaseLost[0].Messages[0].LeaseID, rec.leaseLost[0].LeaseID)
		require.Len(t, rec.handled, 2)
		assert.Empty(t, rec.handled[0].Outcome, "no ack follows a lost lease")
		assert.ErrorIs(t, rec.handled[0].Err, ErrLeaseLost)
		require.Len(t, rec.acked, 1, "the redelivery's ack alone")
	})
}

// An ack held back for a second or more has the lease extended first; when the broker refuses
// (the lease ran out while the handler ran), nothing is acked and the loss is reported.
func TestAHeldAckWhoseExtendIsRefusedAcksNothing(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	spy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	pushN(t, c, "lost-wait", "p", 1)
	var attempts []int
	var reported errorLog
	err := c.Queue("lost-wait").Limit(2).OnError(reported.record).Each().
		Consume(testutil.Context(t), func(_ context.Context, m *Message) error {
			attempts = append(attempts, m.DeliveryAttempt)
			if len(attempts) == 1 {
				srv.Advance(61 * time.Second) // the lease runs out while the handler runs
				return RetryAfter(5*time.Second, errors.New("later"))
			}
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, attempts, "delivered again once the lease ran out")
	assert.Equal(t, 1, spy.Count(route.Extend))
	assert.Len(t, spy.Of(route.FamilyAck), 1, "only the redelivery was acked")
	_, errs := reported.all()
	require.NotEmpty(t, errs)
	assert.ErrorIs(t, errs[len(errs)-1], ErrLeaseLost)
}

// The renewer keeps a batch whose handler runs three leases long: every half lease it extends
// the lease by another, and nothing is delivered again meanwhile.
func TestRenewalKeepsALongHandlersBatchLeased(t *testing.T) {
	t.Parallel()
	srv, c := brokerAndClient(t, queentest.WithManualClock())
	clock, renewed := useManualClock(c)
	watcher := newTestClient(t, srv.URL())
	pushN(t, c, "long", "p", 1)

	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	done := testutil.Go(func() error {
		return c.Queue("long").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(1).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				calls.Add(1)
				close(started)
				<-release
				return ctx.Err()
			})
	})
	testutil.Recv(t, started, "the handler")
	for range 6 { // every 5s (half the lease), 30s of broker time: three leases
		clock.Advance(5 * time.Second)
		require.NoError(t, testutil.Recv(t, renewed, "a renewal"))
		srv.Advance(5 * time.Second)
		msgs, err := watcher.Queue("long").Pop(t.Context())
		require.NoError(t, err)
		require.Empty(t, msgs, "the leased message was handed out again")
	}
	close(release)
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.EqualValues(t, 1, calls.Load())
	assert.Empty(t, drain(t, c, "long"), "completed under the renewed lease")
}

// A renewal extends by LeaseTime when it is set, else by 60s, and always sends whole seconds.
func TestARenewalExtendsByTheLeaseTime(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		b    func(QueueBuilder) QueueBuilder
		want string
	}{
		"lease time": {func(b QueueBuilder) QueueBuilder { return b.LeaseTime(3 * time.Second) }, `{"seconds":3}`},
		"default":    {func(b QueueBuilder) QueueBuilder { return b }, `{"seconds":60}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := queentest.NewServer(t, queentest.WithManualClock())
			spy, url := testutil.NewSpy(t, srv.Handler())
			c := newTestClient(t, url)
			clock, renewed := useManualClock(c)
			pushN(t, c, "q", "p", 1)
			err := tc.b(c.Queue("q")).RenewLease(true, time.Second).Limit(1).Each().
				Consume(testutil.Context(t), func(context.Context, *Message) error {
					clock.Advance(time.Second)
					assert.NoError(t, testutil.Recv(t, renewed, "a renewal"))
					return nil
				})
			require.NoError(t, err)
			extends := spy.Of(route.FamilyExtend)
			require.NotEmpty(t, extends)
			assert.JSONEq(t, tc.want, string(extends[0].Body))
		})
	}
}

// everyFiveSeconds renews a lease every 5s by 30s, the first time 5s from now.
var everyFiveSeconds = renewPlan{every: 5 * time.Second, extend: 30 * time.Second, first: 5 * time.Second}

// One renewer serves every lease of a client: one extend per leaseId per period, however many
// batches hold it; a refused one tells every holder; it stops with the client.
func TestLeaseRenewerServesEveryLeaseOfAClient(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	clock, renewed := useManualClock(c)
	var leases []string
	for p := range 3 {
		pushN(t, c, "renew", fmt.Sprintf("p%d", p), 1)
		msgs, err := c.Queue("renew").Partition(fmt.Sprintf("p%d", p)).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		leases = append(leases, msgs[0].LeaseID)
	}

	var mu sync.Mutex
	extended := map[string]int{}
	lost := map[string]int{}
	holder := func(id string) *leaseHolder {
		return &leaseHolder{
			extended: func(sent, _ time.Time) time.Time { mu.Lock(); extended[id]++; mu.Unlock(); return sent },
			lost:     func() { mu.Lock(); lost[id]++; mu.Unlock() },
			failed:   func(err error) { t.Errorf("renewal of %s not sent: %v", id, err) },
		}
	}
	var untrack []func()
	for _, id := range append(leases, "unknown-lease") {
		for range 4 { // four batches (partitions of one pop) hold each lease
			untrack = append(untrack, c.renewer.track(id, everyFiveSeconds, holder(id)).end)
		}
	}

	clock.Advance(5 * time.Second)
	for range 4 {
		testutil.Recv(t, renewed, "a renewal")
	}
	assert.Equal(t, 4, proxy.Count(route.Extend), "one extend per lease")
	mu.Lock()
	for _, id := range leases {
		assert.Equal(t, 4, extended[id], "every holder of %s heard of the renewal", id)
	}
	assert.Equal(t, 4, lost["unknown-lease"], "every holder of a refused lease heard of it")
	mu.Unlock()

	for _, u := range untrack {
		u()
	}
	c.renewer.stop() // waits for the goroutine; goleak checks nothing is left
	noop := c.renewer.track(leases[0], renewPlan{every: time.Second, extend: time.Second}, holder(leases[0]))
	noop.end()
	clock.Advance(time.Minute)
	assert.Equal(t, 4, proxy.Count(route.Extend), "nothing renewed after stop")
}

// Renewals are sent side by side: with eight leases due at once and a broker that answers an
// extend only once all eight have arrived, every lease is renewed. Sent one after another,
// each slow extend would delay the rest past their expiry.
func TestLeaseRenewerRenewsLeasesConcurrently(t *testing.T) {
	t.Parallel()
	const leases = 8
	srv := queentest.NewServer(t)
	var arrived sync.WaitGroup
	arrived.Add(leases)
	allIn := make(chan struct{})
	go func() { arrived.Wait(); close(allIn) }()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/extend") {
			arrived.Done()
			select {
			case <-allIn: // the broker answers once every extend is in flight
			case <-r.Context().Done():
				return
			}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	c := newTestClient(t, slow.URL)
	clock, renewed := useManualClock(c)

	var ids []string
	for p := range leases {
		part := fmt.Sprintf("p%d", p)
		pushN(t, c, "renew-many", part, 1)
		msgs, err := c.Queue("renew-many").Partition(part).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		ids = append(ids, msgs[0].LeaseID)
	}
	var extended sync.WaitGroup
	extended.Add(leases)
	for _, id := range ids {
		untrack := c.renewer.track(id, everyFiveSeconds, &leaseHolder{
			extended: func(sent, _ time.Time) time.Time { extended.Done(); return sent },
			lost:     func() { t.Errorf("lease %s lost", id) },
			failed:   func(err error) { t.Errorf("renewal of %s not sent: %v", id, err) },
		})
		t.Cleanup(untrack.end)
	}
	clock.Advance(5 * time.Second)
	select {
	case <-allIn:
	case <-time.After(testutil.Timeout):
		t.Fatal("the extends were not in flight together")
	}
	for range leases {
		require.NoError(t, testutil.Recv(t, renewed, "a renewal"))
	}
	extended.Wait()
}

// Renewals keep up however many leases a client holds: 1,000 single-message leases of 3s on a
// broker that takes 50ms to answer each request lose none over 15s of renewals, and none is
// renewed late. With a cap of 16 extends in flight the client renewed 320 leases a second and
// lost most of them in the first round.
func TestRenewalsKeepUpWithAThousandLeases(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const leases, lease = 1000, 3 * time.Second
		f := newFakeBroker("many", false)
		f.leaseTime, f.rtt = lease, 50*time.Millisecond
		c := f.client(t)
		var lost atomic.Int64
		for i := range leases {
			id := f.grant(fmt.Sprintf("p%04d", i))
			untrack := c.renewer.track(id, renewPlan{extend: lease, expires: time.Now().Add(lease), first: lease / 2},
				&leaseHolder{
					extended: func(sent, _ time.Time) time.Time { return sent.Add(lease) },
					failed:   func(err error) { t.Errorf("renewal of %s not sent: %v", id, err) },
					lost:     func() { lost.Add(1) },
				})
			defer untrack.end()
		}
		time.Sleep(15 * time.Second)
		f.stats(func(f *fakeBroker) {
			assert.Zero(t, f.expired, "leases that ran out")
			assert.Zero(t, f.lateExtends, "renewals that came after their lease ran out")
			assert.GreaterOrEqual(t, f.extends, leases*9, "each lease renewed every half lease")
		})
		assert.Zero(t, lost.Load())
	})
}

// A renewal that goes out after the lease it renews ran out (the process was paused, say) is
// logged at warn, with its leaseId.
func TestARenewalSentAfterItsLeaseRanOutIsLoggedAtWarn(t *testing.T) {
	t.Parallel()
	f := newFakeBroker("late", false)
	f.leaseTime = time.Hour
	var logs testutil.LogBuffer
	c := f.client(t, WithLogger(jsonLogger(&logs)))
	clock, renewed := useManualClock(c)
	id := f.grant("p")
	untrack := c.renewer.track(id, renewPlan{extend: 10 * time.Second, expires: clock.Now().Add(10 * time.Second),
		first: 5 * time.Second}, &leaseHolder{
		extended: func(sent, _ time.Time) time.Time { return sent.Add(10 * time.Second) },
		failed:   func(error) {}, lost: func() {},
	})
	defer untrack.end()
	clock.Advance(4 * time.Second)
	clock.Advance(2 * time.Second) // due, in time
	require.NoError(t, testutil.Recv(t, renewed, "the renewal in time"))
	assert.NotContains(t, logs.String(), "after the lease ran out")
	clock.Advance(20 * time.Second) // paused past the lease's end
	require.NoError(t, testutil.Recv(t, renewed, "the late renewal"))
	assert.Contains(t, logs.String(), `"level":"WARN","msg":"queen: lease renewal sent after the lease ran out`)
	assert.Contains(t, logs.String(), `"leaseId":"`+id+`"`)
}

// The renewer's cost with 10,000 leases in flight: each op renews every one of them once,
// through the client's whole request path, against a broker that answers at once.
func BenchmarkRenewerWithTenThousandLeases(b *testing.B) {
	const leases, every = 10_000, 5 * time.Second
	f := newFakeBroker("bench", false)
	f.leaseTime = 24 * time.Hour
	c := f.client(b)
	clock := newManualClock()
	c.clock = clock
	var answered sync.WaitGroup
	c.renewer.observe = func(_ string, err error) {
		if err != nil {
			b.Error(err)
		}
		answered.Done()
	}
	for i := range leases {
		untrack := c.renewer.track(f.grant(fmt.Sprintf("p%05d", i)), renewPlan{every: every, extend: time.Minute,
			expires: clock.Now().Add(time.Minute), first: every}, &leaseHolder{
			extended: func(sent, _ time.Time) time.Time { return sent.Add(time.Minute) },
			failed:   func(err error) { b.Error(err) }, lost: func() { b.Error("lost") },
		})
		defer untrack.end()
	}
	start := time.Now()
	testutil.CPULoop(b, func() {
		answered.Add(leases)
		clock.Advance(every)
		answered.Wait()
	})
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*leases), "ns/renewal")
}

// With no option at all a handler slower than its lease keeps it: renewal is on by default.
// Without LeaseTime the loop does not know the lease, so a batch's first renewal goes after
// 10s; the broker's answer then shows a lease longer than that renewal explains (a 0.15
// queue's 300s), which the loop learns: every later renewal goes halfway to the lease's
// expiry, the next batch's first one too. A 60s lease is not told apart from the 60s the
// renewal extends it by, so it stays unknown, and each renewal extends it 60s from then.
// RenewLease(false, 0) turns renewal off.
func TestByDefaultASlowHandlerKeepsItsLeaseAndTheLoopLearnsTheLease(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		gen015  bool
		lease   time.Duration
		handler time.Duration
		off     bool
		learned bool
	}{
		{"2.0, 60s lease", false, time.Minute, 100 * time.Second, false, false},
		{"0.15, 300s lease", true, 300 * time.Second, 400 * time.Second, false, true},
		{"2.0, renewal off", false, time.Minute, 100 * time.Second, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeBroker("slow", tc.gen015)
				f.leaseTime, f.rtt = tc.lease, 10*time.Millisecond
				f.pushN("p", 2)
				c := f.client(t)
				b := c.Queue("slow").Batch(1)
				if tc.off {
					b = b.RenewLease(false, 0)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 3*tc.handler)
				defer cancel()
				err := b.Limit(2).Each().Consume(ctx, func(context.Context, *Message) error {
					time.Sleep(tc.handler)
					return nil
				})
				require.NoError(t, err)
				f.stats(func(f *fakeBroker) {
					if tc.off {
						assert.Zero(t, f.extends, "no renewal")
						assert.Positive(t, f.expired, "the handler outlived its lease")
						return
					}
					assert.Zero(t, f.expired, "leases that ran out")
					assert.Equal(t, map[string]int{"p-0": 1, "p-1": 1}, f.handedOut, "each message delivered once")
					byLease := map[string][]time.Duration{}
					var leases []string
					for _, e := range f.extendLog {
						if byLease[e.lease] == nil {
							leases = append(leases, e.lease)
						}
						byLease[e.lease] = append(byLease[e.lease], e.since)
					}
					require.Len(t, leases, 2)
					first := byLease[leases[0]]
					assert.InDelta(t, float64(unknownLeaseRenewal), float64(first[0]), float64(time.Second),
						"the first batch's first renewal, with the lease unknown: %v", first)
					if !tc.learned {
						assert.InDelta(t, float64(unknownLeaseRenewal+30*time.Second), float64(first[1]), float64(time.Second),
							"the next, halfway to the 60s the first one gave: %v", first)
						return
					}
					assert.Greater(t, first[1]-first[0], 100*time.Second, "halfway to the lease learned: %v", first)
					assert.Greater(t, byLease[leases[1]][0], 100*time.Second, "the next batch knows the lease: %v", byLease[leases[1]])
				})
			})
		})
	}
}

// leaseHolder is a leaseKeeper made of funcs, for the renewer's tests.
type leaseHolder struct {
	// extended is told of a renewal sent at sent that succeeded, with the expiry the broker
	// answered (zero when not said), and returns when the lease now runs out.
	extended func(sent, expiresAt time.Time) time.Time
	failed   func(err error) // a renewal could not be sent; it is tried again soon
	lost     func()          // a renewal was refused: the lease is gone
}

func (h *leaseHolder) renewed(sent, expiresAt time.Time) time.Time {
	return h.extended(sent, expiresAt)
}
func (h *leaseHolder) renewFailed(err error) { h.failed(err) }
func (h *leaseHolder) leaseLost()            { h.lost() }
