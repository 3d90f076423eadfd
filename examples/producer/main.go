// Producer publishes a burst of order events through a queen.Producer: Send only buffers, the
// Producer gathers the events of many customers (one partition each) into a few requests, and
// OnResult reports every event once. Each customer's events are then read back in the order
// they were sent.
package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() { exampleenv.Main("producer", run) }

const (
	customers = 8
	perClient = 250
)

type orderEvent struct {
	Customer string `json:"customer"`
	Seq      int    `json:"seq"`
}

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()
	queue := exampleenv.QueueName("producer-orders")

	var (
		mu       sync.Mutex
		statuses = map[string]int{}
		failures []error
	)
	producer, err := client.NewProducer(queen.ProducerConfig{
		Linger:   2 * time.Millisecond,
		MaxBatch: 500,
		// Called once per event, from the Producer's goroutines: keep it short.
		OnResult: func(queue string, item queen.PushItem, res queen.PushResult, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, fmt.Errorf("%s %s: %w", queue, item.TransactionID, err))
				return
			}
			statuses[res.Status]++
		},
	})
	if err != nil {
		return err
	}

	// One goroutine per customer; a customer's events share its partition, so they are stored
	// in the order this loop sends them.
	var wg sync.WaitGroup
	errs := make(chan error, customers)
	for c := range customers {
		customer := fmt.Sprintf("customer-%d", c)
		wg.Go(func() {
			for seq := range perClient {
				err := producer.Send(ctx, queue, queen.PushItem{
					Data:          orderEvent{Customer: customer, Seq: seq},
					Partition:     customer,
					TransactionID: fmt.Sprintf("%s-%d", customer, seq), // a resend is a duplicate, not a copy
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil { // the first failed Send, if any
		return err
	}
	fmt.Fprintf(out, "sent %d events for %d customers\n", customers*perClient, customers)

	// Close flushes what is buffered and waits for every answer.
	if err := producer.Close(ctx); err != nil {
		return err
	}
	mu.Lock()
	fmt.Fprintf(out, "answered: queued=%d duplicate=%d failed=%d\n", statuses["queued"], statuses["duplicate"], len(failures))
	mu.Unlock()
	if len(failures) > 0 {
		return failures[0]
	}

	msgs, err := client.Queue(queue).Partition("customer-3").Batch(perClient).Pop(ctx)
	if err != nil {
		return err
	}
	inOrder := true
	for i, m := range msgs {
		inOrder = inOrder && m.TransactionID == fmt.Sprintf("customer-3-%d", i)
	}
	if _, err := client.AckBatch(ctx, ackAll(msgs)); err != nil {
		return err
	}
	fmt.Fprintf(out, "customer-3: %d events read back, in send order: %t\n", len(msgs), inOrder)
	fmt.Fprintln(out, "producer done")
	return nil
}

func ackAll(msgs []*queen.Message) []queen.AckItem {
	items := make([]queen.AckItem, len(msgs))
	for i, m := range msgs {
		items[i] = queen.AckItem{Message: m, Status: queen.StatusCompleted}
	}
	return items
}
