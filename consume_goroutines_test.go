package queen

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// A goroutine that finished its work takes the next piece instead of a new goroutine starting,
// so that the stack a pop or an ack grew serves the next one too.
func TestTheGoroutinePoolReusesAWaitingGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGoroutinePool(1)
		var ran atomic.Int32
		p.Go(func() { ran.Add(1) })
		synctest.Wait() // done, and waiting for more
		p.Go(func() { ran.Add(1) })
		synctest.Wait()
		assert.Equal(t, int32(2), ran.Load())
		assert.Equal(t, int32(1), p.spawned.Load(), "the second piece of work ran on the first goroutine")
		p.wait()
	})
}

// Work given while every goroutine is busy starts a goroutine of its own; once it is all done,
// no more goroutines wait than the pool keeps, and wait returns once the work has ended.
func TestTheGoroutinePoolRunsEverythingAndKeepsFewWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGoroutinePool(2)
		release := make(chan struct{})
		var ran atomic.Int32
		for range 5 {
			p.Go(func() {
				<-release
				ran.Add(1)
			})
		}
		synctest.Wait()
		assert.Equal(t, int32(5), p.spawned.Load(), "none was free to take another's work")
		close(release)
		synctest.Wait()
		assert.Equal(t, int32(5), ran.Load())
		assert.Equal(t, int32(2), p.waiting.Load(), "three ended rather than wait")
		p.wait()
		assert.Equal(t, int32(0), p.waiting.Load())
	})
}

// wait does not return while work given to the pool still runs.
func TestTheGoroutinePoolWaitsForRunningWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newGoroutinePool(1)
		release := make(chan struct{})
		var finished atomic.Bool
		p.Go(func() {
			<-release
			finished.Store(true)
		})
		waited := make(chan struct{})
		go func() {
			p.wait()
			close(waited)
		}()
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("wait returned while the work ran")
		default:
		}
		close(release)
		<-waited
		assert.True(t, finished.Load())
	})
}
