// Command queen-ref serves Queen's reference broker: the in-memory broker of package queentest
// behind the 2.0 consuming API, for local development and integration tests.
//
//	go run ./cmd/queen-ref [-addr 127.0.0.1:6632] [-token secret] [-compat 2.0|0.15] [-log-level info]
//
// SIGINT or SIGTERM stops it: it stops accepting, answers waiting long polls empty, lets
// in-flight requests finish and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/queenmq/queen-go/queentest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "queen-ref:", err)
		}
		os.Exit(2)
	}
}

// run serves until ctx is done, then shuts down gracefully. Logs go to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("queen-ref", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:6632", "TCP address to listen on")
	token := fs.String("token", "", "require Authorization: Bearer <token> on /api/v1 (default: no auth)")
	compat := fs.String("compat", "2.0", `answer as this Queen version does: "2.0" or "0.15" (its wire shapes and semantics)`)
	level := fs.String("log-level", "info", "log level: debug (one line per request), info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl}))

	srv, err := queentest.Start(
		queentest.WithAddr(*addr),
		queentest.WithToken(*token),
		queentest.WithLogger(logger),
		queentest.WithCompat(*compat),
	)
	if err != nil {
		return err
	}
	<-ctx.Done()
	logger.Info("shutting down", "cause", context.Cause(ctx))
	return srv.Close()
}
