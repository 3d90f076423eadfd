// Command queenctl administers a Queen broker: dead letters, seeks, queues and consumer groups.
//
//	queenctl dlq list --queue orders
//	queenctl dlq replay 0193…            # or: queenctl dlq replay --queue orders --all
//	queenctl seek --group billing --queue orders --to 2026-11-29T10:00:00Z
//	queenctl queue configure orders --lease-time 30s --retry-limit 5
//
// The broker is --server (or QUEEN_URL, default http://127.0.0.1:6632) and the token --token
// (or QUEEN_TOKEN). Output is a table, or JSON with --json. Exit status: 0 success, 1 the broker
// refused or failed, 2 bad usage.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
