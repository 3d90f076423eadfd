package queen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wait of a second or more extends the lease first; when the broker refuses (the lease ran
// out while the handler ran), nothing is acked and the loss is reported.
func TestConsumeBackoffOnALostLeaseAcksNothing(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	proxy, base := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, base)
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
	assert.Equal(t, 1, proxy.Count(route.Extend))
	assert.Equal(t, 1, len(proxy.Of(route.FamilyAck)), "only the redelivery was acked")
	_, errs := reported.all()
	require.NotEmpty(t, errs)
	assert.ErrorIs(t, errs[len(errs)-1], ErrLeaseLost)
}

// A lost lease reaches OnError as ErrLeaseLost with the batch's first message.
func TestConsumeLostLeaseIsReportedToOnError(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	c := newTestClient(t, srv.URL())
	clock, renewed := useManualRenewClock(c)
	pushN(t, c, "lost-report", "p", 1)
	started := make(chan struct{})
	reported := make(chan error, 4)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	done := testutil.Go(func() error {
		return c.Queue("lost-report").LeaseTime(10*time.Second).RenewLease(true, 0).
			OnError(func(m *Message, err error) {
				if errors.Is(err, ErrLeaseLost) && m != nil && m.TransactionID == "p-0" {
					reported <- err
				}
			}).Each().
			Consume(ctx, func(hctx context.Context, m *Message) error {
				if m.DeliveryAttempt == 1 {
					close(started)
					<-hctx.Done()
					return hctx.Err()
				}
				return nil
			})
	})
	testutil.Recv(t, started, "the handler")
	srv.Advance(11 * time.Second)
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
	assert.ErrorIs(t, testutil.Recv(t, reported, "the report"), ErrLeaseLost)
	cancel()
	require.NoError(t, testutil.Recv(t, done, "Consume"))
}

// R138, R61: the renewer keeps a batch whose handler runs three leases long; nothing is
// delivered again meanwhile.
func TestConsumeRenewalKeepsALongHandlerLeased(t *testing.T) {
	t.Parallel()
	srv, c := brokerAndClient(t, queentest.WithManualClock())
	clock, renewed := useManualRenewClock(c)
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

// A refused renewal cancels the handler ctx with ErrLeaseLost, and no ack is sent for it.
func TestConsumeLostLeaseCancelsTheHandler(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	clock, renewed := useManualRenewClock(c)
	pushN(t, c, "lost", "p", 1)

	started := make(chan struct{}, 2)
	causes := make(chan error, 2)
	var attempts []int
	done := testutil.Go(func() error {
		return c.Queue("lost").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(2).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				attempts = append(attempts, m.DeliveryAttempt)
				if m.DeliveryAttempt > 1 {
					return nil
				}
				started <- struct{}{}
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return ctx.Err()
			})
	})
	testutil.Recv(t, started, "the handler")
	srv.Advance(11 * time.Second) // the broker expires the lease
	acksBefore := len(proxy.Of(route.FamilyAck))
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
	assert.ErrorIs(t, testutil.Recv(t, causes, "the handler's ctx"), ErrLeaseLost)
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))
	assert.Equal(t, []int{1, 2}, attempts)
	assert.Equal(t, acksBefore+1, len(proxy.Of(route.FamilyAck)), "only the redelivery was acked")
	assert.Empty(t, drain(t, c, "lost"))
}

// A refused renewal reaches LeaseLost with the batch, and Handled with no outcome; a
// LeaseLost hook that panics before it changes nothing.
func TestHooksSeeALostLease(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t, queentest.WithManualClock())
	c := newTestClient(t, srv.URL())
	var rec hookLog
	c.hooks.add(Hooks{LeaseLost: func(LeaseLostEvent) { panic("lease hook") }})
	c.hooks.add(rec.hooks())
	clock, renewed := useManualRenewClock(c)
	pushN(t, c, "lost", "p", 1)

	started := make(chan struct{}, 1)
	done := testutil.Go(func() error {
		return c.Queue("lost").LeaseTime(10*time.Second).RenewLease(true, 0).Limit(1).Each().
			Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			})
	})
	testutil.Recv(t, started, "the handler")
	srv.Advance(11 * time.Second)
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, testutil.Recv(t, renewed, "the renewal"), ErrLeaseExpired)
	require.NoError(t, testutil.Recv(t, done, "Consume to return"))

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.leaseLost, 1)
	assert.Equal(t, "lost", rec.leaseLost[0].Queue)
	require.Len(t, rec.leaseLost[0].Messages, 1)
	assert.Equal(t, rec.leaseLost[0].Messages[0].LeaseID, rec.leaseLost[0].LeaseID)
	require.Len(t, rec.handled, 1)
	assert.Empty(t, rec.handled[0].Outcome)
	assert.ErrorIs(t, rec.handled[0].Err, ErrLeaseLost)
	assert.Empty(t, rec.acked, "nothing of a lost batch is acked")
}

// One renewer serves every lease of a client: one extend per leaseId per period, however many
// batches hold it; a refused one tells every holder; it stops with the client.
func TestLeaseRenewerServesEveryLeaseOfAClient(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	proxy, url := testutil.NewSpy(t, srv.Handler())
	c := newTestClient(t, url)
	clock, renewed := useManualRenewClock(c)
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
			extended: func(time.Time) { mu.Lock(); extended[id]++; mu.Unlock() },
			lost:     func() { mu.Lock(); lost[id]++; mu.Unlock() },
			failed:   func(err error) { t.Errorf("renewal of %s not sent: %v", id, err) },
		}
	}
	var untrack []func()
	for _, id := range append(leases, "unknown-lease") {
		for range 4 { // four batches (partitions of one pop) hold each lease
			untrack = append(untrack, c.renewer.track(id, 5*time.Second, 30*time.Second, holder(id)))
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
	noop := c.renewer.track(leases[0], time.Second, time.Second, holder(leases[0]))
	noop()
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
	clock, renewed := useManualRenewClock(c)

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
		untrack := c.renewer.track(id, 5*time.Second, 30*time.Second, &leaseHolder{
			extended: func(time.Time) { extended.Done() },
			lost:     func() { t.Errorf("lease %s lost", id) },
			failed:   func(err error) { t.Errorf("renewal of %s not sent: %v", id, err) },
		})
		t.Cleanup(untrack)
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
