package queen

import (
	"sync"
	"time"
)

// Batch sizing for Consume.
//
// With autopilot on (the Consume default) and no Batch, the pop sends autopilot=true and the
// broker chooses the batch, as the other SDKs do. On top of that the client measures how long its handler
// takes per message and caps the batch it asks for, so that one batch is expected to be handled
// in half the lease: a slow handler on a broker without autopilot (0.15) never holds leased
// messages long enough for their lease to run out before it reaches them. The cap only ever
// lowers a batch, Batch(n) included.
//
// The cap cannot see every expiry coming (the handler may slow down mid-batch, or the queue's
// lease may be shorter than the client believes), so each message is also checked against its
// lease's expiry, as the client tracks it, just before it is handed to the handler. A message
// whose lease has run out is not handled: it and the rest of its batch are released with
// retry, which the broker refuses when the lease is gone, and they come back either way.

const (
	// autopilotMaxBatch is the largest batch a broker's autopilot chooses.
	autopilotMaxBatch = 1000
	// clientStartBatch is the batch the client asks for, before it has measured its handler,
	// from a broker that does not size pops itself: autopilot's starting size.
	clientStartBatch = 100
	// defaultLeaseTime is the lease the client assumes when Consume sets no LeaseTime: the
	// lease of a push-created queue and of a discovery pop.
	defaultLeaseTime = 60 * time.Second
	// paceWeight is the weight of the newest sample in the handling-time average.
	paceWeight = 0.2
)

// handlingPace is an exponentially weighted moving average of handling time per message.
type handlingPace struct {
	mu         sync.Mutex
	perMessage time.Duration // 0 until the first sample
}

// observe records that n messages were handled in d.
func (p *handlingPace) observe(n int, d time.Duration) {
	if n <= 0 {
		return
	}
	sample := d / time.Duration(n)
	if sample <= 0 {
		sample = time.Nanosecond // a no-op handler still takes some time
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perMessage == 0 {
		p.perMessage = sample
		return
	}
	p.perMessage += time.Duration(paceWeight * float64(sample-p.perMessage))
	if p.perMessage <= 0 {
		p.perMessage = time.Nanosecond
	}
}

// batchCap is the largest batch expected to be handled within half of lease, or 0 before
// anything was measured.
func (p *handlingPace) batchCap(lease time.Duration) int {
	p.mu.Lock()
	per := p.perMessage
	p.mu.Unlock()
	if per <= 0 {
		return 0
	}
	n := int64(lease/2) / int64(per)
	return int(min(max(n, 1), maxBatch))
}

// popSizing tells whether the broker sizes autopilot pops itself. A 0.15 broker ignores
// autopilot and leases one message per pop; the loop then sizes the batch itself (nextBatch),
// so that defaults never mean one pop and one ack per message. The broker is told by its
// answers, never by a version: messages without an offset, or an empty answer with a body
// where a 2.0 broker answers 204. Only the fetch loop uses it.
type popSizing struct {
	byClient bool
}

func (s *popSizing) clientSizes() bool { return s.byClient }

// observe learns from one pop answer. A conflating group's empty answer has a body on 2.0
// too, so it tells nothing.
func (s *popSizing) observe(msgs []*Message, a popAnswer, conflation bool) {
	switch {
	case len(msgs) > 0:
		s.byClient = msgs[0].Offset < 0
	case a.bodied && !conflation:
		s.byClient = true
	}
}
