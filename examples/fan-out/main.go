// Fan-out has two consumer groups read the same queue, each at its own pace: billing handles
// every order, while analytics runs later and still sees them all, because each group keeps its
// own cursor and the messages are stored once.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fan-out:", err)
		os.Exit(1)
	}
}

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
	orders := client.Queue(exampleenv.QueueName("fanout-orders"))

	const count = 20
	var items []queen.PushItem
	for i := range count {
		items = append(items, queen.PushItem{Data: map[string]int{"order": i}})
	}
	// Four partitions, so each group can work on several at once.
	for p := range 4 {
		if _, err := orders.Partition(fmt.Sprintf("region-%d", p)).Push(ctx, items[p*5:(p+1)*5]...); err != nil {
			return err
		}
	}

	for _, group := range []string{"billing", "analytics"} {
		var handled atomic.Int64
		err := orders.Group(group).
			SubscriptionMode(queen.SubscribeAll).
			Concurrency(4).
			Limit(count).
			IdleTimeout(5*time.Second).
			Each().
			Consume(ctx, func(ctx context.Context, m *queen.Message) error {
				handled.Add(1)
				return nil
			})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "group %s handled %d orders\n", group, handled.Load())
	}
	fmt.Fprintln(out, "fan-out done")
	return nil
}
