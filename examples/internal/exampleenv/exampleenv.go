// Package exampleenv gives the examples a broker: the one QUEEN_URL names, or else the reference
// broker started in-process, so every example runs with nothing installed.
package exampleenv

import (
	"fmt"
	"os"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

// Broker returns the URL and token of the broker to use, and a func that stops it when it was
// started here.
func Broker() (url, token string, stop func(), err error) {
	if url := os.Getenv("QUEEN_URL"); url != "" {
		return url, os.Getenv("QUEEN_TOKEN"), func() {}, nil
	}
	srv, err := queentest.Start()
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
