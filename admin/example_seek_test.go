package admin_test

import (
	"context"
	"fmt"
	"log"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/queentest"
)

// A group handled a bad hour of orders with a buggy build: seek it back to the start of that
// hour, and it receives those orders again (and only those), once the fix is deployed.
func ExampleAdmin_SeekConsumerGroup() {
	// The reference broker on a clock of its own, so that the example can move time on.
	srv, err := queentest.Start(queentest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := queen.New(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()

	orders := client.Queue("orders")
	push := func(data string) {
		if _, err := orders.Push(ctx, queen.PushItem{Data: data}); err != nil {
			log.Fatal(err)
		}
	}
	push("before the deploy")
	srv.Advance(time.Hour)
	badHour := srv.Now()
	push("o-1")
	push("o-2")

	billing := orders.Group("billing").SubscriptionMode(queen.SubscribeAll).Batch(10)
	consume := func() {
		msgs, err := billing.Pop(ctx)
		if err != nil {
			log.Fatal(err)
		}
		for _, m := range msgs {
			fmt.Println("billing:", string(m.Data))
			if err := m.Ack(ctx); err != nil {
				log.Fatal(err)
			}
		}
	}
	consume() // with the buggy build

	ops := admin.New(client)
	if err := ops.SeekConsumerGroup(ctx, "billing", "orders", admin.SeekToTime(badHour)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("sought billing back to the deploy")
	consume() // with the fix
	// Output:
	// billing: "before the deploy"
	// billing: "o-1"
	// billing: "o-2"
	// sought billing back to the deploy
	// billing: "o-1"
	// billing: "o-2"
}
