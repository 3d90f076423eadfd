// Fan-out has two consumer groups read the same queue, each at its own pace: billing handles
// every order, while analytics runs later and still sees them all, because each group keeps its
// own cursor and the messages are stored once.
package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

func main() { exampleenv.Main("fan-out", run) }

func run(ctx context.Context, out io.Writer) error {
	client, closeAll, err := exampleenv.Connect()
	if err != nil {
		return err
	}
	defer closeAll()
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
