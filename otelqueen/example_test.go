package otelqueen_test

import (
	"context"
	"log"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/otelqueen"
)

// Wire otelqueen into a client, and carry the producer's trace to the consumers.
func Example() {
	client, err := queen.New("http://127.0.0.1:6632",
		queen.WithMiddleware(otelqueen.Middleware()), // spans and process metrics; give it first
		queen.WithHooks(otelqueen.Hooks()))           // client operation metrics
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx := context.Background() // in a real producer: the ctx of the span that makes the order
	_, err = client.Queue("orders").Push(ctx, queen.PushItem{Data: map[string]int{"id": 1}, TraceID: otelqueen.TraceID(ctx)})
	if err != nil {
		log.Print(err)
	}
}
