// Testing shows how to test a worker with the reference broker in queentest: main_test.go waits
// for the worker to drain its queue with srv.WaitIdle (no sleeping), counts its dead letters with
// srv.DeadLetters, proves with a lost answer (srv.Fail) that running the handler twice stores
// nothing twice, and unit-tests the handler alone. This program runs the same worker once.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() { exampleenv.Main("testing", run) }

type order struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"` // in cents
}

type invoice struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

// pusher is what the worker needs of a queue: a QueueBuilder in production, a fake in a unit test.
type pusher interface {
	Push(ctx context.Context, items ...queen.PushItem) ([]queen.PushResult, error)
}

// Billing turns each order into an invoice.
type Billing struct {
	Invoices pusher
}

var errBadOrder = errors.New("order without an amount")

// Handle bills one order. It is safe to run twice for the same order, as at-least-once
// delivery will: the invoice's transactionId comes from the order, so a second push of it is a
// duplicate the broker does not store. An order that can never be billed is dead-lettered.
func (b Billing) Handle(ctx context.Context, m *queen.Message) error {
	var o order
	if err := json.Unmarshal(m.Data, &o); err != nil {
		return queen.DeadLetter(fmt.Errorf("order %s: %w", m.TransactionID, err))
	}
	if o.Amount <= 0 {
		return queen.DeadLetter(fmt.Errorf("order %s: %w", o.ID, errBadOrder))
	}
	_, err := b.Invoices.Push(ctx, queen.PushItem{
		Data:          invoice{Order: o.ID, Amount: o.Amount},
		TransactionID: "invoice-" + o.ID,
	})
	return err // an error retries the order, and so the push
}

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()
	orders := client.Queue(exampleenv.QueueName("testing-orders"))
	invoices := client.Queue(exampleenv.QueueName("testing-invoices"))

	for _, o := range []order{{"o1", 1200}, {"o2", 0}, {"o3", 450}} {
		if _, err := orders.Push(ctx, queen.PushItem{Data: o, TransactionID: o.ID}); err != nil {
			return err
		}
	}
	billing := Billing{Invoices: invoices}
	err = orders.Group("billing").SubscriptionMode(queen.SubscribeAll).IdleTimeout(200*time.Millisecond).
		Each().Consume(ctx, billing.Handle)
	if err != nil {
		return err
	}
	got, err := invoices.Batch(10).Pop(ctx)
	if err != nil {
		return err
	}
	for _, m := range got {
		fmt.Fprintf(out, "invoice %s: %s\n", m.TransactionID, m.Data)
	}
	fmt.Fprintln(out, "testing done")
	return nil
}
