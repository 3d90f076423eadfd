package queentest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// Fail breaks requests on purpose, to prove what a client does with them: here a push answered
// 503 once, which the client's retries hide, and a push stored but whose answer is lost, which
// a client without retries reports as an unknown outcome.
func ExampleServer_Fail() {
	srv, err := queentest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	client, err := queen.New(srv.URL()) // retries 5xx answers, with backoff
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	srv.Fail(queentest.Fault{Route: "push", Status: 503})
	_, err = client.Queue("orders").Push(ctx, queen.PushItem{Data: "o-1"})
	fmt.Printf("push through a 503: %v (faults met: %d)\n", err, srv.FaultsMet())

	once, err := queen.New(srv.URL(), queen.WithRetry(0, 0, 0)) // never retries
	if err != nil {
		log.Fatal(err)
	}
	defer once.Close()
	srv.Fail(queentest.Fault{Route: "push", After: true}) // stored, then the connection drops
	_, err = once.Queue("orders").Push(ctx, queen.PushItem{Data: "o-2"})
	fmt.Println("push whose answer was lost: outcome unknown:", errors.Is(err, queen.ErrOutcomeUnknown))
	fmt.Println("messages stored:", srv.Lag("orders", ""))
	// Output:
	// push through a 503: <nil> (faults met: 1)
	// push whose answer was lost: outcome unknown: true
	// messages stored: 2
}

// WaitIdle waits, without sleeping or polling, until a worker has finished everything: every
// message of the queue acked or dead-lettered by its group.
func ExampleServer_WaitIdle() {
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

	for i := range 5 {
		if _, err := client.Queue("orders").Push(ctx, queen.PushItem{Data: i}); err != nil {
			log.Fatal(err)
		}
	}
	// The worker under test runs in the background until its ctx ends.
	var handled atomic.Int32
	workerCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- client.Queue("orders").Group("billing").SubscriptionMode(queen.SubscribeAll).Each().
			Consume(workerCtx, func(context.Context, *queen.Message) error {
				handled.Add(1)
				return nil
			})
	}()

	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.WaitIdle(waitCtx, "orders", "billing"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("handled:", handled.Load(), "lag:", srv.Lag("orders", "billing"))
	stop()
	fmt.Println("worker stopped:", <-done)
	// Output:
	// handled: 5 lag: 0
	// worker stopped: <nil>
}
