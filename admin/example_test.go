package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/queentest"
)

// A worker gives up on a message; an operator lists the dead letter and replays it.
func Example() {
	srv, err := queentest.Start()
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
	if _, err := orders.Push(ctx, queen.PushItem{Data: map[string]int{"order": 42}}); err != nil {
		log.Fatal(err)
	}
	msgs, err := orders.Pop(ctx)
	if err != nil || len(msgs) != 1 {
		log.Fatal(err)
	}
	if err := msgs[0].DeadLetter(ctx, errors.New("unknown customer")); err != nil {
		log.Fatal(err)
	}

	a := admin.New(client)
	page, err := a.DeadLetters(ctx, admin.DLQQuery{Queue: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	for _, dl := range page.DeadLetters {
		fmt.Printf("%s: %s\n", dl.Error, dl.Data)
		r, err := a.ReplayDeadLetter(ctx, dl.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("replayed as dlq:<id>:", r.TransactionID == "dlq:"+dl.ID)
	}
	// Output:
	// unknown customer: {"order":42}
	// replayed as dlq:<id>: true
}
