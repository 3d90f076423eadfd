package queen

import (
	"sync"
	"sync/atomic"
)

// goroutinePool runs a loop's pops and batches on goroutines that, once done, wait for the next
// piece of work instead of ending. A pop or an ack goes down the HTTP path, which grows a
// goroutine's stack well past its first size; a fresh goroutine per pop and per batch would grow
// (copy) its stack afresh every time, which at batch 1 is a cost paid per message. At most
// maxIdle goroutines wait for work; one more ends instead.
type goroutinePool struct {
	work    chan func() // unbuffered: a send succeeds only when a goroutine is waiting
	waiting atomic.Int32
	spawned atomic.Int32 // goroutines started, in all
	maxIdle int32
	running sync.WaitGroup
}

func newGoroutinePool(maxIdle int) *goroutinePool {
	return &goroutinePool{work: make(chan func()), maxIdle: int32(max(maxIdle, 1))}
}

// Go runs fn on a waiting goroutine of the pool, or on a new one when none waits.
func (p *goroutinePool) Go(fn func()) {
	select {
	case p.work <- fn:
	default:
		p.running.Add(1)
		p.spawned.Add(1)
		go p.serve(fn)
	}
}

// serve runs fn, then whatever it is given next, until the pool ends or enough others wait.
func (p *goroutinePool) serve(fn func()) {
	defer p.running.Done()
	for fn != nil {
		fn()
		if p.waiting.Add(1) > p.maxIdle {
			p.waiting.Add(-1)
			return
		}
		fn = <-p.work // nil once the pool has ended
		p.waiting.Add(-1)
	}
}

// wait ends the pool once what it runs is done. Go must not be called after it.
func (p *goroutinePool) wait() {
	close(p.work)
	p.running.Wait()
}
