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

// OutcomeOf tells what Consume would ack for a handler's return, so a handler can be tested
// without a broker.
func ExampleOutcomeOf() {
	// chargeCard is the consume handler under test: a declined card is given up on, a busy
	// gateway is asked again later, and anything else is a failure.
	chargeCard := func(_ context.Context, m *queen.Message) error {
		switch string(m.Data) {
		case `"declined"`:
			return queen.DeadLetter(errors.New("card declined"))
		case `"busy"`:
			return queen.RetryAfter(30*time.Second, errors.New("gateway busy"))
		case `"ok"`:
			return nil
		}
		return errors.New("unexpected answer")
	}

	for _, data := range []string{`"ok"`, `"busy"`, `"declined"`, `"garbled"`} {
		err := chargeCard(context.Background(), &queen.Message{Data: []byte(data)})
		fmt.Println(data, queen.OutcomeOf(err))
	}
	// Output:
	// "ok" completed
	// "busy" retry
	// "declined" dlq
	// "garbled" failed
}

func Example() {
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

	orders := client.Queue("orders")
	if _, err := orders.Push(ctx, queen.PushItem{Data: map[string]int{"order": 1}}); err != nil {
		log.Fatal(err)
	}
	err = orders.Group("billing").SubscriptionMode(queen.SubscribeAll).Limit(1).Each().
		Consume(ctx, func(ctx context.Context, m *queen.Message) error {
			fmt.Printf("%s (attempt %d)\n", m.Data, m.DeliveryAttempt)
			return nil // acked completed
		})
	if err != nil {
		log.Fatal(err)
	}
	// Output: {"order":1} (attempt 1)
}

func ExampleEachBuilder_Consume() {
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

	jobs := client.Queue("jobs")
	if _, err := jobs.Push(ctx, queen.PushItem{Data: "resize"}); err != nil {
		log.Fatal(err)
	}
	// A failing handler spends a retry; the message comes back with the next attempt number.
	err = jobs.Limit(2).Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
		fmt.Printf("attempt %d\n", m.DeliveryAttempt)
		if m.DeliveryAttempt == 1 {
			return fmt.Errorf("transient failure")
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// attempt 1
	// attempt 2
}

func ExampleQueueBuilder_Consume() {
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

	events := client.Queue("events").Partition("device-7")
	for i := range 3 {
		if _, err := events.Push(ctx, queen.PushItem{Data: i}); err != nil {
			log.Fatal(err)
		}
	}
	// A BatchHandler receives one partition's leased messages per call, in offset order.
	err = client.Queue("events").Batch(10).Limit(3).IdleTimeout(time.Second).
		Consume(ctx, func(ctx context.Context, msgs []*queen.Message) error {
			for _, m := range msgs {
				fmt.Printf("%s:%s ", m.Partition, m.Data)
			}
			fmt.Println()
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Output: device-7:0 device-7:1 device-7:2
}

func ExampleQueueBuilder_Pop() {
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
	if _, err := tasks.Push(ctx, queen.PushItem{Data: "a"}, queen.PushItem{Data: "b"}); err != nil {
		log.Fatal(err)
	}
	// Pop leases up to a batch; each message is settled by hand (or all at once: AckBatch).
	msgs, err := tasks.Batch(10).Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("popped", len(msgs))
	if err := msgs[0].Ack(ctx); err != nil {
		log.Fatal(err)
	}
	if err := msgs[1].DeadLetter(ctx, errors.New("unsupported task")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("settled twice:", errors.Is(msgs[0].Ack(ctx), queen.ErrAlreadySettled))
	fmt.Println("dead letters:", srv.DeadLetters("tasks"))
	// Output:
	// popped 2
	// settled twice: true
	// dead letters: 1
}

func ExampleClient_Transaction() {
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

	if _, err := client.Queue("orders").Push(ctx, queen.PushItem{Data: map[string]string{"id": "o-1"}}); err != nil {
		log.Fatal(err)
	}
	msgs, err := client.Queue("orders").Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Ack the order and push its invoice as one step: both happen, or neither.
	_, err = client.Transaction().
		Ack(msgs[0], queen.StatusCompleted).
		Push("invoices", queen.PushItem{Data: map[string]string{"order": "o-1"}, TransactionID: "invoice-o-1"}).
		Commit(ctx)
	if err != nil {
		log.Fatal(err)
	}
	invoices, err := client.Queue("invoices").Pop(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(invoices[0].TransactionID, string(invoices[0].Data))
	// Output: invoice-o-1 {"order":"o-1"}
}
