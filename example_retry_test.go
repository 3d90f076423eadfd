package queen_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// RetryAfter asks for the message again once a delay has passed, without spending one of its
// retries: for a downstream that said "not now" (a 429 with Retry-After, a closed window).
func ExampleRetryAfter() {
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

	if _, err := client.Queue("emails").Push(ctx, queen.PushItem{Data: "welcome"}); err != nil {
		log.Fatal(err)
	}
	deliveries := 0
	var first time.Time
	err = client.Queue("emails").Limit(2).Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
		deliveries++
		if deliveries == 1 {
			first = time.Now()
			return queen.RetryAfter(50*time.Millisecond, errors.New("mail server busy"))
		}
		fmt.Printf("delivery %d of %s, at least 50ms later: %t\n", deliveries, m.Data, time.Since(first) >= 50*time.Millisecond)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dead letters:", srv.DeadLetters("emails"))
	// Output:
	// delivery 2 of "welcome", at least 50ms later: true
	// dead letters: 0
}
