// Worker is the shape of a production consumer: structured logs, several partitions handled at
// once, leases renewed while a slow job runs, and a graceful stop on SIGINT/SIGTERM that lets
// in-flight jobs finish and hands unstarted ones back to the broker at once.
//
//	go run ./examples/worker              # pushes 40 demo jobs, handles them, exits
//	go run ./examples/worker -demo 0      # handles jobs until Ctrl-C
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/examples/internal/exampleenv"
)

type job struct {
	ID     int    `json:"id"`
	Tenant string `json:"tenant"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("worker", flag.ContinueOnError)
	demo := flags.Int("demo", 40, "push this many demo jobs and exit once they are handled (0: run until signalled)")
	concurrency := flags.Int("concurrency", 4, "partitions handled at once")
	flags.SetOutput(out)
	if err := flags.Parse(args); err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	client, closeAll, err := exampleenv.Connect(queen.WithLogger(log))
	if err != nil {
		return err
	}
	defer closeAll()
	jobs := client.Queue(exampleenv.QueueName("worker-jobs"))

	if *demo > 0 {
		for i := range *demo {
			tenant := fmt.Sprintf("tenant-%d", i%8)
			if _, err := jobs.Partition(tenant).Push(ctx, queen.PushItem{Data: job{ID: i, Tenant: tenant}}); err != nil {
				return err
			}
		}
		log.Info("pushed demo jobs", "count", *demo)
	}

	var handled atomic.Int64
	consumer := jobs.Group("workers").
		SubscriptionMode(queen.SubscribeAll).
		Concurrency(*concurrency).
		Batch(10).
		LeaseTime(30*time.Second).
		RenewLease(true, 10*time.Second). // a job may outlive its lease; keep it renewed
		ShutdownTimeout(20 * time.Second).
		OnError(func(m *queen.Message, err error) {
			if m == nil {
				log.Warn("broker unavailable, backing off", "err", err)
				return
			}
			log.Error("job failed", "tx", m.TransactionID, "attempt", exampleenv.Attempt(m), "err", err)
		})
	if *demo > 0 {
		consumer = consumer.Limit(*demo)
	}

	err = consumer.Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
		var j job
		if err := m.Decode(&j); err != nil {
			return queen.DeadLetter(fmt.Errorf("undecodable job: %w", err))
		}
		digest := sha256.Sum256(m.Data) // stands in for the real work
		handled.Add(1)
		log.Debug("job done", "id", j.ID, "tenant", j.Tenant, "digest", fmt.Sprintf("%x", digest[:4]))
		return ctx.Err() // a job cut short by shutdown is retried, not lost
	})
	if err != nil {
		return err
	}
	log.Info("worker stopped", "handled", handled.Load())
	return nil
}
