package queen

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

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
