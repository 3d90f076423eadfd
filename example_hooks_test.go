package queen_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// Hooks see every HTTP attempt and every answered ack, for metrics or logs of your own (otelqueen
// is built on them). They run synchronously: keep them quick, and guard what they share.
func ExampleHooks() {
	srv, err := queentest.Start() // the reference broker, in memory, on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	var mu sync.Mutex
	var seen []string
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf(format, args...))
	}
	client, err := queen.New(srv.URL(), queen.WithHooks(queen.Hooks{
		Request: func(e queen.RequestEvent) { // Route is a pattern: no queue names in it
			note("%s %s %s: %d, attempt %d", e.Operation, e.Method, e.Route, e.Status, e.Attempt)
		},
		Acked: func(e queen.AckedEvent) {
			note("acked %s: %s, success %t", e.Message.Data, e.Status, e.Success)
		},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()

	orders := client.Queue("orders")
	if _, err := orders.Push(ctx, queen.PushItem{Data: "o-1"}); err != nil {
		log.Fatal(err)
	}
	msgs, err := orders.Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := msgs[0].Ack(ctx); err != nil {
		log.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		fmt.Println(s)
	}
	// Output:
	// push POST /api/v1/push: 201, attempt 1
	// pop GET /api/v1/pop/queue/{queue}: 200, attempt 1
	// ack POST /api/v1/ack: 200, attempt 1
	// acked "o-1": completed, success true
}
