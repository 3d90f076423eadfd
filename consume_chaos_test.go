package queen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
)

// Chaos: the real consume loop against the reference broker, whose faults (srv.Fail) answer 5xx,
// loses answers the broker applied, and drops connections, with handlers that fail, panic,
// retry, outlive their lease or meet poison. Faults come from a seeded math/rand; the seed is
// logged and QUEEN_CHAOS_SEED replays its fault schedule.
//
// Each scenario runs against the broker as 2.0 and as 0.15 (testmode.ForEachMode), with the
// same checks. What differs on 0.15: order is checked by push order, and a delivery's attempt is
// the rig's own count (0.15 sends neither offset nor deliveryAttempt); there is no discovery
// pop on 0.15, so that scenario runs on 2.0 only; and a message right after a poison one is
// never failed, since 0.15 keeps the spent retry counter after a dead letter and files such a
// message on its first failure, a loss no client can prevent.

// defaultTransportFaults breaks about one request in six.
var defaultTransportFaults = transportFaults{errorBefore: 0.05, lostAnswer: 0.05, dropBefore: 0.03, dropAfter: 0.03}

var stormTransportFaults = transportFaults{errorBefore: 0.08, lostAnswer: 0.08, dropBefore: 0.05, dropAfter: 0.05}

var defaultHandlerFaults = handlerFaults{fail: 0.04, panic: 0.03, retry: 0.04, stall: 0.01, poison: 0.01}

// Every pushed message is completed at least once by every group, whatever breaks (failing,
// panicking, retrying and stalling handlers, expiring leases, lost and refused requests): first
// completions come in offset order per partition, nothing is left on the broker, and only
// poison is dead-lettered.
func TestUnderChaosEveryMessageIsCompleted(t *testing.T) {
	t.Parallel()
	seed := chaosSeed(t)
	cases := map[string]chaosConfig{
		"each/queue/concurrency1": {partitions: 3, perPartition: 70, concurrency: 1, batch: 5},
		"each/queue/concurrency4": {partitions: 6, perPartition: 50, concurrency: 4, batch: 10},
		"each/groups/concurrency3": {partitions: 5, perPartition: 50, concurrency: 3, batch: 8,
			groups: []string{"billing", "audit"}},
		"each/autopilot/concurrency4": {partitions: 8, perPartition: 40, concurrency: 4},
		"each/partitions3/concurrency6": {partitions: 8, perPartition: 30, concurrency: 6, batch: 12,
			tune: func(b QueueBuilder) QueueBuilder { return b.Partitions(3) }},
		"each/renew/concurrency2": {partitions: 4, perPartition: 60, concurrency: 2, batch: 10,
			tune: func(b QueueBuilder) QueueBuilder {
				return b.LeaseTime(chaosLease).RenewLease(true, 5*time.Millisecond)
			}},
		"batch/queue/concurrency4": {partitions: 6, perPartition: 50, concurrency: 4, batch: 10,
			batchHandler: true},
		"each/manual-ack/concurrency3": {partitions: 6, perPartition: 40, concurrency: 3, batch: 10,
			manualAck: true},
		"each/discovery/concurrency3": {partitions: 5, perPartition: 40, concurrency: 3, batch: 10,
			discovery: true},
		// Two loops of one group compete for its partitions: each message goes to one at a time.
		"each/competing/2x3": {partitions: 6, perPartition: 40, concurrency: 3, batch: 10,
			groups: []string{"workers", "workers"}},
		// Twice the transport faults and no transport retries: every fault reaches the loop.
		"each/storm/concurrency4": {partitions: 4, perPartition: 40, concurrency: 4, batch: 10,
			transport: stormTransportFaults},
		// Leases run out five times as often, under renewal, with partitions sharing a lease.
		"each/stalls/renew/partitions3": {partitions: 8, perPartition: 30, concurrency: 4, batch: 12,
			handler: handlerFaults{fail: 0.02, panic: 0.02, retry: 0.02, stall: 0.05, poison: 0.01},
			tune: func(b QueueBuilder) QueueBuilder {
				return b.Partitions(3).LeaseTime(chaosLease).RenewLease(true, 5*time.Millisecond)
			}},
	}
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		for name, cfg := range cases {
			if mode.V015 && cfg.discovery {
				continue // 0.15 has no discovery pop
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg.retries = 1
				if cfg.handler == (handlerFaults{}) {
					cfg.handler = defaultHandlerFaults
				}
				if cfg.transport == (transportFaults{}) {
					cfg.transport = defaultTransportFaults
				} else {
					cfg.retries = 0
				}
				if cfg.batchHandler {
					cfg.handler.poison = 0 // a poisoned batch would dead-letter its good messages too
				}
				r := newChaosRig(t, mode, seed, cfg)
				ctx := testutil.ContextWithin(t, chaosTimeout)
				rounds := r.drive(ctx, r.client())
				r.verify(ctx, rounds)
			})
		}
	})
}

// Consume is stopped by its ctx, at a point chosen by a count of completed messages, three
// times over, with the faults on and in-flight handlers cut short (ShutdownTimeout 0); later
// Consumes still complete everything. The "limit" case stops by Limit instead, which releases
// what was leased beyond it.
func TestUnderChaosAStopMidFlightLosesNothing(t *testing.T) {
	t.Parallel()
	seed := chaosSeed(t)
	cases := map[string]chaosConfig{
		"each/queue": {partitions: 6, perPartition: 50, concurrency: 4, batch: 10},
		"each/groups": {partitions: 5, perPartition: 40, concurrency: 3, batch: 8,
			groups: []string{"billing", "audit"}},
		"batch/queue":      {partitions: 6, perPartition: 40, concurrency: 3, batch: 10, batchHandler: true},
		"each/queue/limit": {partitions: 6, perPartition: 40, concurrency: 4, batch: 10},
		"each/manual-ack":  {partitions: 6, perPartition: 40, concurrency: 3, batch: 10, manualAck: true},
	}
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		for name, cfg := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg.transport, cfg.handler, cfg.retries = defaultTransportFaults, defaultHandlerFaults, 1
				if cfg.batchHandler {
					cfg.handler.poison = 0
				}
				r := newChaosRig(t, mode, seed, cfg)
				ctx := testutil.ContextWithin(t, chaosTimeout)
				c := r.client()
				cut := func(b QueueBuilder) QueueBuilder { return b.ShutdownTimeout(0) }
				stops := mix(seed, "stops", name)
				total := cfg.partitions * cfg.perPartition
				for stop := range 3 {
					if strings.HasSuffix(name, "/limit") {
						n := 1 + stops.IntN(total/6)
						limit := func(b QueueBuilder) QueueBuilder { return b.ShutdownTimeout(0).Limit(n) }
						require.NoError(t, r.round(ctx, c, limit))
						require.NoError(t, ctx.Err(), "stop %d by Limit(%d): not completed %v", stop, n, r.missing())
						r.srv.Advance(chaosLease + time.Second) // in case it went idle first
						t.Logf("stop %d: Limit(%d)", stop, n)
						continue
					}
					fired, at := r.armTrigger(1 + stops.IntN(total/6))
					stopped := false
					for round := 0; !stopped; round++ {
						require.Less(t, round, chaosMaxRounds, "stop %d at %d completions never came", stop, at)
						rctx, cancel := context.WithCancel(ctx)
						go func() {
							select {
							case <-fired:
								cancel()
							case <-rctx.Done():
							}
						}()
						require.NoError(t, r.round(rctx, c, cut))
						stopped = rctx.Err() != nil && ctx.Err() == nil
						cancel()
						require.NoError(t, ctx.Err(), "stop %d at %d completions: not completed %v", stop, at, r.missing())
						if !stopped {
							r.srv.Advance(chaosLease + time.Second) // it went idle first: bring back what was lost
						}
					}
					t.Logf("stop %d: ctx cancelled once every group had completed %d messages", stop, at)
				}
				rounds := r.drive(ctx, c)
				r.verify(ctx, rounds)
			})
		}
	})
}

// Client.Close ends a running Consume of every group (each returns nil) at a point chosen by a
// count of completed messages, three times over with a new client each time; later clients
// still complete everything.
func TestUnderChaosACloseMidFlightLosesNothing(t *testing.T) {
	t.Parallel()
	seed := chaosSeed(t)
	cases := map[string]chaosConfig{
		"each/groups": {partitions: 5, perPartition: 40, concurrency: 3, batch: 8,
			groups: []string{"billing", "audit"}},
		"each/queue/renew": {partitions: 6, perPartition: 40, concurrency: 4, batch: 10,
			tune: func(b QueueBuilder) QueueBuilder {
				return b.LeaseTime(chaosLease).RenewLease(true, 5*time.Millisecond)
			}},
	}
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		for name, cfg := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg.transport, cfg.handler, cfg.retries = defaultTransportFaults, defaultHandlerFaults, 1
				cfg.newClients = true
				r := newChaosRig(t, mode, seed, cfg)
				ctx := testutil.ContextWithin(t, chaosTimeout)
				stops := mix(seed, "closes", name)
				total := cfg.partitions * cfg.perPartition
				for stop := range 3 {
					fired, at := r.armTrigger(1 + stops.IntN(total/6))
					c := r.client()
					for round := 0; ; round++ {
						require.Less(t, round, chaosMaxRounds, "close %d at %d completions never came", stop, at)
						done := make(chan error, 1)
						go func() { done <- r.round(ctx, c, nil) }()
						closed := false
						select {
						case <-fired:
							closeErr := make(chan error, 1)
							go func() { closeErr <- c.Close() }()
							require.NoError(t, testutil.Recv(t, closeErr, "Client.Close to return"))
							closed = true
						case err := <-done:
							require.NoError(t, err)
							done <- nil // for the wait below
						}
						// Every Consume returns nil, stopped by Close or gone idle; a group's Consume
						// that only began once Close had started is refused with ErrClosed.
						err := testutil.Recv(t, done, "Consume to return after Close")
						if closed {
							err = dropRefusedByClose(err)
						}
						require.NoError(t, err)
						require.NoError(t, ctx.Err(), "close %d at %d completions: not completed %v", stop, at, r.missing())
						if closed {
							break
						}
						r.srv.Advance(chaosLease + time.Second) // it went idle first: bring back what was lost
					}
					t.Logf("close %d: Client.Close once every group had completed %d messages", stop, at)
				}
				rounds := r.drive(ctx, r.client())
				r.verify(ctx, rounds)
			})
		}
	})
}

// dropRefusedByClose removes from a round's joined errors those of a Consume refused with
// ErrClosed because it began after Close.
func dropRefusedByClose(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if errors.Is(err, ErrClosed) {
			return nil
		}
		return err
	}
	var left []error
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, ErrClosed) {
			left = append(left, e)
		}
	}
	return errors.Join(left...)
}
