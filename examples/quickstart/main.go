// Quickstart pushes a few orders, consumes them with the builder, shows a failing order being
// retried and then dead-lettered, replays it once the cause is fixed, and exits 0.
//
//	go run ./examples/quickstart                                 # in-process reference broker
//	QUEEN_URL=http://localhost:6632 go run ./examples/quickstart # a running broker
//
// On a running broker its queue has a name of its own at every run (quickstart-orders-<time>),
// and it deletes the queue when it finishes, even after an error, so no run leaves anything
// behind. It prints the same on every broker, 0.15 included.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

type order struct {
	ID     int `json:"id"`
	Amount int `json:"amount"`
}

func main() { exampleenv.Main("quickstart", run) }

func run(ctx context.Context, out io.Writer) error {
	url, token, stopBroker, err := exampleenv.Broker()
	if err != nil {
		return err
	}
	defer stopBroker()

	client, err := queen.New(url, queen.WithToken(token))
	if err != nil {
		return err
	}
	defer client.Close()
	queue := exampleenv.QueueName("quickstart-orders")

	// One retry: a message that fails is delivered twice, then filed as a dead letter. The other
	// options keep their values (here, the broker's defaults).
	ops := admin.New(client)
	if err := ops.UpdateQueue(ctx, queue, func(o *admin.QueueOptions) { o.RetryLimit = new(1) }); err != nil {
		return fmt.Errorf("configure %s: %w", queue, err)
	}
	deleted := false
	defer func() { // on an error: delete the queue all the same
		if !deleted {
			_ = ops.DeleteQueue(context.WithoutCancel(ctx), queue)
		}
	}()

	// One partition per customer: a customer's orders stay in order, and one customer's failing
	// order does not hold up the others.
	orders := client.Queue(queue)
	const count = 5
	for id := 1; id <= count; id++ {
		customer := orders.Partition(fmt.Sprintf("customer-%d", id))
		if _, err := customer.Push(ctx, queen.PushItem{Data: order{ID: id, Amount: id * 10}}); err != nil {
			return fmt.Errorf("push: %w", err)
		}
	}
	fmt.Fprintf(out, "pushed %d orders to %s\n", count, queue)

	// Order 3's card is declined until the customer fixes it.
	var cardFixed atomic.Bool
	var mu sync.Mutex // handlers of different customers run at once
	deliveries := map[int]int{}
	// delivered counts the deliveries of order id. A 2.0 broker counts them too
	// (m.DeliveryAttempt), a 0.15 broker does not.
	delivered := func(id int) int {
		mu.Lock()
		defer mu.Unlock()
		deliveries[id]++
		return deliveries[id]
	}
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format, args...)
	}
	billing := orders.Group("billing").
		SubscriptionMode(queen.SubscribeAll).
		Concurrency(3).
		Batch(10).
		Timeout(200 * time.Millisecond).
		IdleTimeout(time.Second)
	handle := func(ctx context.Context, m *queen.Message) error {
		var o order
		if err := m.Decode(&o); err != nil {
			return queen.DeadLetter(err) // a malformed order will never succeed
		}
		n := delivered(o.ID)
		if o.ID == 3 && !cardFixed.Load() {
			say("order %d: card declined (delivery %d)\n", o.ID, n)
			return errors.New("card declined")
		}
		say("order %d: charged %d (delivery %d)\n", o.ID, o.Amount, n)
		return nil
	}
	if err := billing.Each().Consume(ctx, handle); err != nil {
		return fmt.Errorf("consume: %w", err)
	}

	page, err := ops.DeadLetters(ctx, admin.DLQQuery{Queue: queue, ConsumerGroup: "billing"})
	if err != nil {
		return fmt.Errorf("list dead letters: %w", err)
	}
	if len(page.DeadLetters) != 1 {
		return fmt.Errorf("expected one dead letter, found %d", len(page.DeadLetters))
	}
	dead := page.DeadLetters[0]
	fmt.Fprintf(out, "dead letter: %s after %d retries: %s\n", dead.Data, dead.RetryCount, dead.Error)

	cardFixed.Store(true)
	if _, err := ops.ReplayDeadLetter(ctx, dead.ID); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	fmt.Fprintln(out, "card fixed, dead letter replayed")
	if err := billing.Limit(1).Each().Consume(ctx, handle); err != nil {
		return fmt.Errorf("consume the replay: %w", err)
	}

	// The queue goes, with its messages, cursors and dead letters.
	if err := ops.DeleteQueue(ctx, queue); err != nil {
		return fmt.Errorf("delete %s: %w", queue, err)
	}
	deleted = true
	fmt.Fprintf(out, "deleted %s\n", queue)
	fmt.Fprintln(out, "quickstart done")
	return nil
}
