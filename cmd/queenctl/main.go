// Command queenctl administers a Queen broker: dead letters, seeks, queues and consumer groups.
//
//	queenctl dlq list --queue orders
//	queenctl dlq replay 0193…            # or: queenctl dlq replay --queue orders --all
//	queenctl seek --group billing --queue orders --to 2026-11-29T10:00:00Z
//	queenctl queue configure orders --lease-time 30s --retry-limit 5
//
// The broker is --server (or QUEEN_URL, or a context of ~/.queen/config.yaml chosen with
// --context, default http://127.0.0.1:6632) and the token --token (or QUEEN_TOKEN, or the
// context's). Output is a table, or -o json, ndjson or yaml. Each request waits --timeout
// (default 10s). 'queenctl completion bash|zsh|fish' prints a shell completion script.
//
// Exit status: 0 success, 1 the broker refused or failed (or lag is over a bound), 2 bad usage,
// 3 the broker could not be reached or did not answer in time, 4 a change whose answer was lost:
// it may or may not have been applied.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// runMain runs a command the way the process does: SIGINT or SIGTERM stop it (tail -f ends,
// a batch of replays stops between items) and it still exits with its own status.
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWith(ctx, args, os.Getenv, stdin, stdout, stderr)
}
