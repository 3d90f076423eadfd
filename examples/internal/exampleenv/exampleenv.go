// Package exampleenv gives the examples a broker: the one QUEEN_URL names, or else the reference
// broker started in-process, so every example runs with nothing installed.
package exampleenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// Main runs an example: ctx ends on SIGINT or SIGTERM, output goes to stdout, and an error
// exits 1.
func Main(name string, run func(ctx context.Context, out io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Connect returns a client of the example's broker (see Broker) and a func that closes the
// client, then the broker if it was started here.
func Connect(opts ...queen.Option) (*queen.Client, func(), error) {
	url, token, stopBroker, err := Broker()
	if err != nil {
		return nil, nil, err
	}
	client, err := queen.New(url, append([]queen.Option{queen.WithToken(token)}, opts...)...)
	if err != nil {
		stopBroker()
		return nil, nil, err
	}
	return client, func() { _ = client.Close(); stopBroker() }, nil
}

// Broker returns the URL and token of the broker to use, and a func that stops it when it was
// started here. The in-process broker answers as the Queen version QUEEN_COMPAT names ("0.15"),
// else as 2.0.
func Broker() (url, token string, stop func(), err error) {
	if url := os.Getenv("QUEEN_URL"); url != "" {
		return url, os.Getenv("QUEEN_TOKEN"), func() {}, nil
	}
	srv, err := queentest.Start(queentest.WithCompat(os.Getenv("QUEEN_COMPAT")))
	if err != nil {
		return "", "", nil, fmt.Errorf("start the reference broker: %w", err)
	}
	return srv.URL(), "", func() { _ = srv.Close() }, nil
}

// QueueName returns base, made unique per run when a shared broker is in use, so reruns against
// a real broker do not read each other's messages.
func QueueName(base string) string {
	if os.Getenv("QUEEN_URL") == "" {
		return base
	}
	return fmt.Sprintf("%s-%d", base, time.Now().UnixNano())
}

// Attempt is a message's delivery attempt for printing: "?" when the broker does not count
// them (0.15 sends none, and the message says 0).
func Attempt(m *queen.Message) string {
	if m.DeliveryAttempt <= 0 {
		return "?"
	}
	return strconv.Itoa(m.DeliveryAttempt)
}
