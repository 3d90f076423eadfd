package queen_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// Middleware wraps every handler call: here one logs each call, and one turns an invalid order
// into a dead letter at once instead of spending its retries. What next returns is the
// handler's outcome; what the middleware returns is the one the loop acks.
func ExampleMiddleware() {
	srv, err := queentest.Start() // the reference broker, in memory, on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	errInvalidOrder := errors.New("invalid order") // an order that will never succeed
	logCalls := func(ctx context.Context, msgs []*queen.Message, next func(context.Context) error) error {
		err := next(ctx)
		fmt.Printf("handled %s: %v\n", msgs[0].Data, err)
		return err
	}
	invalidIsDead := func(ctx context.Context, msgs []*queen.Message, next func(context.Context) error) error {
		err := next(ctx)
		if errors.Is(err, errInvalidOrder) {
			return queen.DeadLetter(err)
		}
		return err
	}
	// The client's middleware wraps every loop's; the first given is the outermost.
	client, err := queen.New(srv.URL(), queen.WithMiddleware(logCalls))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()

	orders := client.Queue("orders")
	if _, err := orders.Push(ctx, queen.PushItem{Data: "o-1"}, queen.PushItem{Data: "o-2?"}); err != nil {
		log.Fatal(err)
	}
	err = orders.Use(invalidIsDead).Limit(2).Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
		if string(m.Data) == `"o-2?"` {
			return fmt.Errorf("order %s: %w", m.Data, errInvalidOrder)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dead letters:", srv.DeadLetters("orders"))
	// Output:
	// handled "o-1": <nil>
	// handled "o-2?": order "o-2?": invalid order
	// dead letters: 1
}
