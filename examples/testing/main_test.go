package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// The example and its tests close their clients and brokers: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// The program bills the good orders once each, with the same output on both broker generations.
func TestRun(t *testing.T) {
	exampletest.SameInBothModes(t, run, `invoice invoice-o1: {"order":"o1","amount":1200}`, "invoice invoice-o3", "testing done")
}

// startWorker runs Billing on srv's "orders" in the background until the test ends.
func startWorker(t *testing.T, client *queen.Client, handle queen.Handler) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		err := client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).
			Each().Consume(ctx, handle)
		assert.NoError(t, err)
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// pushOrders pushes each order to "orders" under its id as transaction id.
func pushOrders(t *testing.T, client *queen.Client, orders ...order) {
	t.Helper()
	for _, o := range orders {
		_, err := client.Queue("orders").Push(t.Context(), queen.PushItem{Data: o, TransactionID: o.ID})
		require.NoError(t, err)
	}
}

// The worker bills every good order once and dead-letters the bad one. WaitIdle returns once the
// group has nothing left (acked or dead-lettered), woken by the broker, with no sleep and no
// IdleTimeout to wait out.
func TestWorkerDrainsTheQueue(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv := m.Server(t)
		client, err := queen.New(srv.URL())
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Close() })

		pushOrders(t, client, order{"o1", 1200}, order{"o2", 0}, order{"o3", 450})
		startWorker(t, client, Billing{Invoices: client.Queue("invoices")}.Handle)

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.WaitIdle(ctx, "orders", "billing"))
		assert.Equal(t, 1, srv.DeadLetters("orders"), "the order without an amount")
		assert.Equal(t, int64(2), srv.Lag("invoices", ""), "one invoice per good order")
	})
}

// The push of an invoice is stored but its answer is lost, so the handler fails and the order
// comes back: the handler runs twice for it, and still one invoice per order is stored. (The
// README's testing section shows this test.)
func TestWorkerIsSafeToRepeat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := queentest.NewServer(t)
	client, err := queen.New(srv.URL(), queen.WithRetry(0, 0, 0)) // let the lost answer reach the handler
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	pushOrders(t, client, order{"o1", 1200}, order{"o2", 0}, order{"o3", 450})

	var runs atomic.Int32
	billing := Billing{Invoices: client.Queue("invoices")}
	handle := func(ctx context.Context, m *queen.Message) error {
		runs.Add(1)
		return billing.Handle(ctx, m)
	}

	srv.Fail(queentest.Fault{Route: "push", After: true, Status: 503}) // the next push is stored, its answer lost
	startWorker(t, client, handle)                                     // Consume in the background

	require.NoError(t, srv.WaitIdle(ctx, "orders", "billing")) // every order acked or dead-lettered
	assert.Equal(t, 1, srv.DeadLetters("orders"))              // the order without an amount
	assert.Equal(t, int64(2), srv.Lag("invoices", ""))         // one invoice per good order, though a handler ran twice
	assert.Zero(t, srv.FaultsLeft(), "an invoice's push met the fault")
	assert.Equal(t, int32(4), runs.Load(), "three orders, one of them handled twice")
}

// fakeInvoices records pushes, for a unit test of the handler without a broker.
type fakeInvoices struct {
	pushed []queen.PushItem
	err    error
}

func (f *fakeInvoices) Push(_ context.Context, items ...queen.PushItem) ([]queen.PushResult, error) {
	f.pushed = append(f.pushed, items...)
	return nil, f.err
}

// The handler alone, with no broker: what it pushes, and the ack its return value means
// (queen.OutcomeOf).
func TestHandleUnit(t *testing.T) {
	t.Parallel()
	msg := func(data string) *queen.Message {
		return &queen.Message{TransactionID: "o9", Data: json.RawMessage(data)}
	}
	var invoices fakeInvoices
	b := Billing{Invoices: &invoices}

	err := b.Handle(t.Context(), msg(`{"id":"o9","amount":300}`))
	assert.Equal(t, queen.StatusCompleted, queen.OutcomeOf(err))
	require.Len(t, invoices.pushed, 1)
	assert.Equal(t, "invoice-o9", invoices.pushed[0].TransactionID)

	err = b.Handle(t.Context(), msg(`{"id":"o9"}`))
	assert.ErrorIs(t, err, errBadOrder)
	assert.Equal(t, queen.StatusDLQ, queen.OutcomeOf(err), "an order without an amount is dead-lettered")

	err = b.Handle(t.Context(), msg(`not json`))
	assert.Equal(t, queen.StatusDLQ, queen.OutcomeOf(err), "so is one that is not JSON")

	unavailable := errors.New("broker unavailable")
	invoices.err = unavailable
	err = b.Handle(t.Context(), msg(`{"id":"o9","amount":300}`))
	assert.ErrorIs(t, err, unavailable)
	assert.Equal(t, queen.StatusFailed, queen.OutcomeOf(err), "a failed push fails the order, to be retried")
}
