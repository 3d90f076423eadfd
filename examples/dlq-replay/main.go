// Dlq-replay files a message nobody can handle as a dead letter, lists the dead-letter queue with
// package admin, and replays it: the copy goes to the end of its partition, where every group
// reading that partition receives it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() { exampleenv.Main("dlq-replay", run) }

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()
	ops := admin.New(client)
	queue := exampleenv.QueueName("dlq-payments")

	if err := ops.ConfigureQueue(ctx, queue, admin.QueueOptions{RetryLimit: new(0)}); err != nil {
		return err
	}
	payments := client.Queue(queue)
	if _, err := payments.Push(ctx, queen.PushItem{Data: map[string]any{"payment": "p-1", "iban": "??"}}); err != nil {
		return err
	}

	// With no retries, the first failure files the dead letter.
	msgs, err := payments.Group("settlement").SubscriptionMode(queen.SubscribeAll).Pop(ctx)
	if err != nil {
		return err
	}
	if err := msgs[0].Nack(ctx, errors.New("invalid IBAN")); err != nil {
		return err
	}

	page, err := ops.DeadLetters(ctx, admin.DLQQuery{Queue: queue})
	if err != nil {
		return err
	}
	// page.Total counts every dead letter of the query, or is -1 where the broker does not say
	// (0.15): go on with page.Offset while a page is full.
	fmt.Fprintf(out, "dead letters: %d\n", len(page.DeadLetters))
	for _, d := range page.DeadLetters {
		fmt.Fprintf(out, "  group %s: %s: %s\n", d.ConsumerGroup, d.Error, d.Data)
	}

	replayed, err := ops.ReplayDeadLetter(ctx, page.DeadLetters[0].ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "replayed as %s\n", replayed.TransactionID)

	// Both the group that gave up and a group that never saw the failure receive the copy.
	for _, group := range []string{"settlement", "audit"} {
		msgs, err := payments.Group(group).SubscriptionMode(queen.SubscribeAll).Batch(10).Pop(ctx)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.TransactionID == replayed.TransactionID {
				fmt.Fprintf(out, "group %s received the replay\n", group)
			}
			if err := m.Ack(ctx); err != nil {
				return err
			}
		}
	}

	// A second replay never makes a second copy: the broker answers that the dead letter is
	// gone (ErrNotFound), or, where the replay is emulated by a push (0.15), the push is a
	// duplicate that stores nothing.
	again, err := ops.ReplayDeadLetter(ctx, page.DeadLetters[0].ID)
	if err != nil && !errors.Is(err, admin.ErrNotFound) {
		return err
	}
	fmt.Fprintf(out, "second replay stored a second copy: %t\n", err == nil && !again.Duplicate)
	fmt.Fprintln(out, "dlq-replay done")
	return nil
}
