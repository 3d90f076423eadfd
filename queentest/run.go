package queentest

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Run runs fn (a worker, a Consume loop) in a goroutine for the rest of the test. fn's ctx ends
// when stop is called or, at the latest, when the test ends; stop then waits for fn to return
// and returns its error, nil for a graceful stop (fn returned nil, or ctx's own error once
// stopped). stop may be called more than once and returns the same result each time.
//
// If the test never calls stop, its cleanup does, and fails the test if fn returned any other
// error, so that a worker that gave up early (bad options, a refused token) cannot pass
// unnoticed. A test that calls stop receives the error itself and decides.
func Run(t testing.TB, fn func(ctx context.Context) error) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = fn(ctx)
	}()
	var once sync.Once
	var result error
	finish := func() error {
		once.Do(func() {
			cancel()
			<-done
			if err != nil && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
				result = err
			}
		})
		return result
	}
	var mu sync.Mutex
	stopped := false // whether the test called stop, and so saw the error
	t.Cleanup(func() {
		mu.Lock()
		called := stopped
		mu.Unlock()
		if err := finish(); err != nil && !called {
			t.Errorf("queentest.Run: the function returned %v", err)
		}
	})
	return func() error {
		mu.Lock()
		stopped = true
		mu.Unlock()
		return finish()
	}
}
