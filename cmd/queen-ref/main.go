// Command queen-ref serves Queen's reference broker: the in-memory broker that package queentest
// runs in tests, behind the 2.0 consuming API (or as a 0.15 broker), for local development and
// integration tests.
//
//	go run ./cmd/queen-ref [-addr 127.0.0.1:6632] [-token secret] [-compat 2.0|0.15] [-log-level info] [-max-conns 4096]
//
// It keeps everything in memory: stopping it (by any signal) or a crash discards every message,
// cursor and dead letter, so it is no place for data that must outlive the process.
//
// Without -token, the token is read from the QUEEN_TOKEN environment variable (which, unlike
// a flag, other users cannot see in the process list); with neither, no auth is required.
//
// At most -max-conns connections are served at once, lowered below the process's open-file
// limit less 64 (a warning at start says so); at the cap, a new connection closes the one idle
// the longest, and with none idle it waits.
//
// SIGINT or SIGTERM stops it: it stops accepting, answers waiting long polls empty, gives
// in-flight requests 5 seconds to finish, closes the connections left and exits 0.
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
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/refserver"
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
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:6632", "TCP address to listen on")
	token := fs.String("token", "", "require Authorization: Bearer <token> on every API request, /health aside (default: $QUEEN_TOKEN, else no auth)")
	compat := fs.String("compat", "2.0", `answer as this Queen version does: "2.0" or "0.15" (its wire shapes and semantics)`)
	maxConns := fs.Int("max-conns", refserver.DefaultMaxConns, "most connections served at once, kept below the open-file limit less 64; at the cap the longest idle one is closed, else new ones wait")
	level := fs.String("log-level", "info", "log level: debug (one line per request), info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *maxConns < 1 {
		return fmt.Errorf("-max-conns must be at least 1, got %d", *maxConns)
	}
	if !flagGiven(fs, "token") {
		*token = os.Getenv("QUEEN_TOKEN")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl}))

	mode, ok := broker.ModeOf(*compat)
	if !ok {
		return fmt.Errorf(`-compat %q: unknown Queen version; want "2.0" or "0.15"`, *compat)
	}
	engine := broker.New(broker.RealClock{}, broker.WithMode(mode))
	srv := refserver.New(engine, refserver.Config{Token: *token, Logger: logger, Addr: *addr, MaxConns: *maxConns})
	if err := srv.Listen(); err != nil {
		engine.Close()
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	<-ctx.Done()
	logger.Info("shutting down", "cause", context.Cause(ctx))
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		// Stopping is what was asked for: requests still running were cut off, and said so.
		logger.Warn("requests still running after the grace period were cut off", "grace", shutdownGrace, "error", err)
	}
	return nil
}

// usageHeader opens -h.
const usageHeader = `Usage: queen-ref [flags]

queen-ref serves Queen's reference broker over HTTP, for local development and tests.
It keeps everything in memory: stopping it (any signal) or a crash discards every message,
cursor and dead letter.

Flags:
`

// shutdownGrace is how long in-flight requests may run on after SIGINT or SIGTERM.
const shutdownGrace = 5 * time.Second

// flagGiven reports whether the command line set the flag, even to "".
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
