package queen

import (
	"sync"
	"time"
)

// A named group in mode "new" receives the messages stored after its first pop. A 0.15 broker
// records that start only when one of the group's pops claims a partition with a message, so
// a group whose first pops find the queue empty would start "after the newest message" when
// messages arrive, skipping the ones pushed in between. The loop keeps the 2.0 meaning: from
// its first answer on, until the broker has stored the start, it sends subscriptionFrom set to
// the broker's time of that first pop instead of subscriptionMode=new. That time is the
// answer's Date less the time the pop took and less a second, the Date's precision, so at
// worst a message pushed in that second is delivered, never one skipped. A broker that stores
// the start at the first pop (2.0) answers an empty pop with 204, and the loop stops at once;
// once any pop brings messages, the start is stored on either broker.

// groupStarts remembers, per client, the first-pop time of each (queue, group) whose start
// the broker may not have stored yet, so that later Consume calls of the group keep it.
type groupStarts struct {
	mu sync.Mutex
	m  map[startKey]*groupStart
}

type startKey struct{ queue, group string }

// groupStart is one (queue, group)'s start, shared by the loops of the group on this client.
type groupStart struct {
	mu     sync.Mutex
	from   time.Time // the broker's time of the group's first pop; zero until known
	stored bool      // the broker has stored the start: send subscriptionMode as usual
}

// forLoop is the start state for b's loop, or nil when b's pops do not start "new" by name.
func (g *groupStarts) forLoop(b QueueBuilder) *groupStart {
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
		s = &groupStart{}
		g.m[k] = s
	}
	return s
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
		date := a.date
		if date.IsZero() {
			date = time.Now() // no Date header: the client's clock is the best guess
		}
		// Milliseconds, rounded down: what every broker's timestamp parser reads exactly.
		s.from = date.Add(-a.elapsed - time.Second).Truncate(time.Millisecond)
	}
}
