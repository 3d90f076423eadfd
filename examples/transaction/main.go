// Transaction takes an order, acks it and pushes its invoice to the next queue in one atomic
// step: either both happen or neither does, so a crash in between cannot lose or double an invoice.
package main

import (
	"context"
	"fmt"
	"io"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

type order struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Amount   int    `json:"amount"`
}

type invoice struct {
	Order string `json:"order"`
	Total int    `json:"total"`
}

func main() { exampleenv.Main("transaction", run) }

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()
	ordersQueue := exampleenv.QueueName("tx-orders")
	invoicesQueue := exampleenv.QueueName("tx-invoices")

	orders := client.Queue(ordersQueue)
	if _, err := orders.Push(ctx, queen.PushItem{Data: order{ID: "o-42", Customer: "cust-7", Amount: 120}}); err != nil {
		return err
	}

	msgs, err := orders.Group("invoicing").SubscriptionMode(queen.SubscribeAll).Pop(ctx)
	if err != nil {
		return err
	}
	var o order
	if err := msgs[0].Decode(&o); err != nil {
		return err
	}

	// The invoice's transactionId is derived from the order, so a repeat is a duplicate, not a
	// second invoice.
	res, err := client.Transaction().
		Ack(msgs[0], queen.StatusCompleted).
		PushTo(invoicesQueue, o.Customer, queen.PushItem{
			Data:          invoice{Order: o.ID, Total: o.Amount},
			TransactionID: "invoice-" + o.ID,
		}).
		Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "committed transaction with %d operations\n", len(res.Results))

	// The same ack again is refused: the lease ended with the commit, so the whole transaction
	// rolls back and no second invoice is pushed.
	_, err = client.Transaction().
		Ack(msgs[0], queen.StatusCompleted).
		PushTo(invoicesQueue, o.Customer, queen.PushItem{Data: invoice{Order: o.ID, Total: o.Amount}}).
		Commit(ctx)
	fmt.Fprintf(out, "repeat rolled back: %t\n", err != nil)

	invoices, err := client.Queue(invoicesQueue).Batch(10).Pop(ctx)
	if err != nil {
		return err
	}
	for _, m := range invoices {
		fmt.Fprintf(out, "invoice in partition %s: %s\n", m.Partition, m.Data)
		if err := m.Ack(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "transaction done")
	return nil
}
