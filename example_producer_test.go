package queen_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// A Producer buffers items of any queue and partition into few large pushes, in the background.
// OnResult is called once per item, from the Producer's goroutines; Close flushes what is left.
func ExampleProducer() {
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

	var mu sync.Mutex
	stored, failed := 0, 0
	producer, err := client.NewProducer(queen.ProducerConfig{
		OnResult: func(queue string, item queen.PushItem, res queen.PushResult, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				log.Printf("not stored: %s %s: %v", queue, item.TransactionID, err)
				return
			}
			stored++
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 100 {
		customer := fmt.Sprintf("customer-%d", i%4) // a partition per customer keeps its events in order
		if err := producer.Send(ctx, "events", queen.PushItem{Data: i, Partition: customer}); err != nil {
			log.Fatal(err)
		}
	}
	if err := producer.Close(ctx); err != nil { // every item answered
		log.Fatal(err)
	}
	mu.Lock()
	fmt.Printf("stored %d, failed %d\n", stored, failed)
	mu.Unlock()

	msgs, err := client.Queue("events").Partition("customer-1").Batch(3).Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(string(m.Data))
	}
	// Output:
	// stored 100, failed 0
	// 1
	// 5
	// 9
}
