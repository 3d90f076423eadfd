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

// UpdateQueue changes one option and keeps the others, where ConfigureQueue would put every
// option it is not given back to the broker's default.
func ExampleAdmin_UpdateQueue() {
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
	ops := admin.New(client)

	err = ops.ConfigureQueue(ctx, "orders", admin.QueueOptions{
		LeaseTime: 30 * time.Second, DeadLetterQueue: new(false), Namespace: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	err = ops.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) {
		o.RetryLimit = new(5)
	})
	if err != nil {
		log.Fatal(err)
	}
	info, err := ops.QueueInfo(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	c := info.Config
	fmt.Printf("retry limit %d, lease %s, dead letters filed %t, namespace %s\n",
		c.RetryLimit, c.LeaseTime, c.DeadLetterQueue, c.Namespace)
	// Output: retry limit 5, lease 30s, dead letters filed false, namespace shop
}
