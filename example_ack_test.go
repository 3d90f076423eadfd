package queen_test

import (
	"context"
	"fmt"
	"log"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// AckBatch settles several messages in one request, each with its own status. Acks of a
// partition go in offset order; a retry brings back the message and those after it.
func ExampleClient_AckBatch() {
	srv, err := queentest.Start() // the reference broker, in memory, on 127.0.0.1
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

	tasks := client.Queue("tasks")
	if _, err := tasks.Push(ctx, queen.PushItem{Data: "resize"}, queen.PushItem{Data: "crop"}, queen.PushItem{Data: "upload"}); err != nil {
		log.Fatal(err)
	}
	msgs, err := tasks.Batch(3).Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	results, err := client.AckBatch(ctx, []queen.AckItem{
		{Message: msgs[0], Status: queen.StatusCompleted},
		{Message: msgs[1], Status: queen.StatusRetry, Error: "cropper restarting"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range results {
		fmt.Printf("%s: accepted %t\n", msgs[i].Data, r.Success)
	}

	again, err := tasks.Batch(3).Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range again {
		fmt.Println("back:", string(m.Data))
	}
	// Output:
	// "resize": accepted true
	// "crop": accepted true
	// back: "crop"
	// back: "upload"
}
