package testutil

import (
	"context"
	"testing"
	"time"
)

// Timeout bounds every wait of a test, so that a broken loop fails the test instead of hanging
// the run.
const Timeout = 20 * time.Second

// Context is t.Context() bounded by Timeout.
func Context(t testing.TB) context.Context { return ContextWithin(t, Timeout) }

// ContextWithin is t.Context() bounded by d, for a test whose waits are known to take longer.
func ContextWithin(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// Recv receives from ch, or fails the test after Timeout naming what it waited for.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
		panic("unreachable")
	}
}

// Go runs fn in a goroutine and returns a channel that receives its result.
func Go(fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	return done
}
