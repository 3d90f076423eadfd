// Pop-ack leases a batch with Pop and settles each message by hand with a different status, in
// one batch ack, then shows which messages come back.
package main

import (
	"context"
	"fmt"
	"io"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() { exampleenv.Main("pop-ack", run) }

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()

	tasks := client.Queue(exampleenv.QueueName("pop-ack-tasks")).Partition("tenant-1")
	var items []queen.PushItem
	for _, name := range []string{"resize", "thumbnail", "watermark", "upload"} {
		items = append(items, queen.PushItem{Data: name, TransactionID: "task-" + name})
	}
	if _, err := tasks.Push(ctx, items...); err != nil {
		return err
	}

	msgs, err := tasks.Batch(10).Pop(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "popped %d messages under one lease: %t\n", len(msgs), sameLease(msgs))

	// Acks go in offset order: the first two are done; the third asks for a redelivery, which
	// also brings back everything above it, so the fourth is left unacked.
	results, err := client.AckBatch(ctx, []queen.AckItem{
		{Message: msgs[0], Status: queen.StatusCompleted},
		{Message: msgs[1], Status: queen.StatusCompleted},
		{Message: msgs[2], Status: queen.StatusRetry},
	})
	if err != nil {
		return err
	}
	for i, r := range results {
		fmt.Fprintf(out, "ack %s: success=%t leaseReleased=%t\n", msgs[i].TransactionID, r.Success, r.LeaseReleased)
	}

	again, err := tasks.Batch(10).Pop(ctx)
	if err != nil {
		return err
	}
	for _, m := range again {
		fmt.Fprintf(out, "redelivered %s\n", m.TransactionID)
	}
	// Settle the redelivered batch one message at a time; a second settle is refused locally.
	if err := again[0].Ack(ctx); err != nil {
		return err
	}
	if err := again[0].Ack(ctx); err != nil {
		fmt.Fprintf(out, "second ack of %s: %v\n", again[0].TransactionID, err)
	}
	if err := again[1].DeadLetter(ctx, fmt.Errorf("upload target unreachable")); err != nil {
		return err
	}
	fmt.Fprintf(out, "dead-lettered %s\n", again[1].TransactionID)
	fmt.Fprintln(out, "pop-ack done")
	return nil
}

// sameLease reports whether every message of a pop is held under the first one's lease.
func sameLease(msgs []*queen.Message) bool {
	for _, m := range msgs {
		if m.LeaseID != msgs[0].LeaseID {
			return false
		}
	}
	return len(msgs) > 0
}
