package queen

import (
	"sync"
	"sync/atomic"
	"time"
)

// A named group in mode "new" receives the messages stored after its first pop. A 0.15 broker
// records that start only once one of the group's pops finds a partition with a message: at
// the pop's arrival, or when a waiting pop looks again because messages arrived. So a group
// whose first pops find the queue empty would start "after the newest message" when messages
// arrive, skipping the ones pushed in between; and a first pop that waits stores that start
// itself, losing what arrives while it waits.
//
// The client keeps the 2.0 meaning for each (queue, group), across Pop and Consume calls:
//   - The group's first pop on this client does not wait (a Pop with Wait, or a Consume, sends
//     it with wait=false first): a 2.0 broker stores the start at once and answers an empty
//     pop with a 204, which ends all this; a 0.15 broker answers with a body and stores
//     nothing.
//   - From that answer on, until the broker has stored the start, every pop of the group
//     sends subscriptionFrom set to the broker's time of that first pop instead of
//     subscriptionMode=new, so whichever pop stores the start, waiting or not, stores that
//     one. The time is the answer's Date less the time the pop took and less a second, the
//     Date's precision: at worst a message pushed in that second is delivered, never one
//     skipped.
//   - Once a pop brings messages, the start is stored on either broker.
//
// A client that has seen a message with an offset talks to a 2.0 broker, whose first pop
// stores the start wherever it waits: it sends no first pop without wait. What a 0.15 broker
// does across processes the client cannot help: a group whose first pops found nothing, in a
// process that then stopped, starts again at its next process's first pop.

// groupStarts remembers, per client, the first-pop time of each (queue, group) whose start
// the broker may not have stored yet, so that every later Pop and Consume of the group keeps it.
type groupStarts struct {
	mu sync.Mutex
	m  map[startKey]*groupStart
	// stores20 is set once a pop brought a message with an offset: the broker stores a group's
	// start at its first pop.
	stores20 atomic.Bool
}

type startKey struct{ queue, group string }

// groupStart is one (queue, group)'s start, shared by the pops of the group on this client.
type groupStart struct {
	starts *groupStarts
	mu     sync.Mutex
	from   time.Time // the broker's time of the group's first pop; zero until known
	stored bool      // the broker has stored the start: send subscriptionMode as usual
}

// of is the start state of b's group, or nil when b's pops do not start "new" by name.
func (g *groupStarts) of(b QueueBuilder) *groupStart {
	if b.group == "" || b.group == queueModeGroup || b.fromSet || b.discovery() ||
		(b.modeSet && b.mode != SubscribeNew) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[startKey]*groupStart)
	}
	k := startKey{b.queue, b.group}
	s := g.m[k]
	if s == nil {
		s = &groupStart{starts: g}
		g.m[k] = s
	}
	return s
}

// saw learns from the messages of any pop whether the broker stores starts at once.
func (g *groupStarts) saw(msgs []*Message) {
	if len(msgs) > 0 && msgs[0].Offset >= 0 && !g.stores20.Load() {
		g.stores20.Store(true)
	}
}

// probes reports whether the group's next pop must not wait: no pop of it has been answered
// on this client, and the broker may be one that a waiting first pop loses messages on.
func (s *groupStart) probes() bool {
	if s == nil || s.starts.stores20.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stored && s.from.IsZero()
}

// apply puts the start into a pop's parameters: from the first pop's time while the start is
// known and not stored yet.
func (s *groupStart) apply(p *popParams) {
	if s == nil {
		return
	}
	s.mu.Lock()
	from, stored := s.from, s.stored
	s.mu.Unlock()
	if stored || from.IsZero() {
		return
	}
	p.mode, p.from = "", from.UTC()
}

// observe learns from one answered pop of the group.
func (s *groupStart) observe(msgs []*Message, a popAnswer) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stored:
	case len(msgs) > 0 || !a.bodied:
		s.stored = true // a pop claimed messages, or the broker stored the start at once
	case s.from.IsZero():
		date := a.date()
		if date.IsZero() {
			date = time.Now() // no Date header: the client's clock is the best guess
		}
		// Milliseconds, rounded down: what every broker's timestamp parser reads exactly.
		s.from = date.Add(-a.elapsed - time.Second).Truncate(time.Millisecond)
	}
}
