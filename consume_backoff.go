package queen

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Retry backoff: a failed or retried message waits before its ack is sent, holding its lease
// (see holdBack), rather than being nacked at once and waited for when it comes back. Holding
// the lease keeps the message, and the rest of its partition, away from every other consumer
// for the wait (a redelivered message could be taken by another loop at once), sends nothing
// while it waits, and lets a stop end the wait by acking at once with the outcome it was
// holding back, so that no budget is spent for the stop.

// backoff is how long the ack of a message whose handler call was the nth unsuccessful one
// in a row is held back: RetryAfter's wait, else RetryBackoff's min·2^(n−1) capped at max,
// both with up to 25 % added.
func (l *consumer) backoff(err error, n int) time.Duration {
	if d, ok := retryAfter(err); ok {
		return jitterUp(d)
	}
	if l.retryMin <= 0 || n < 1 {
		return 0
	}
	d := l.retryMax
	if shift := n - 1; shift < 62 && l.retryMin<<shift>>shift == l.retryMin {
		d = min(l.retryMin<<shift, l.retryMax)
	}
	return min(jitterUp(d), l.retryMax)
}

// jitterUp adds up to 25 % to d, so that loops that failed together do not retry together.
func jitterUp(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + rand.N(d/4+1)
}

// failureCounts counts, per message, the unsuccessful handler calls (failures and retries) of
// one loop since the message last succeeded: the exponent of its backoff. The client counts
// them itself because a broker's deliveryAttempt counts deliveries (a message behind a failed
// one comes back with a higher attempt without having been handled) and a 0.15 broker sends
// none.
type failureCounts struct {
	mu sync.Mutex
	n  map[failureKey]int
}

type failureKey struct{ partitionID, transactionID string }

// maxCountedFailures bounds the messages counted at once; beyond it the counts start over.
const maxCountedFailures = 100_000

// add records one more unsuccessful call of m and returns how many there were in a row.
func (f *failureCounts) add(m *Message) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil || len(f.n) >= maxCountedFailures {
		f.n = make(map[failureKey]int)
	}
	k := failureKey{m.PartitionID, m.TransactionID}
	f.n[k]++
	return f.n[k]
}

// forget drops m's count: it succeeded or was filed.
func (f *failureCounts) forget(m *Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.n) > 0 {
		delete(f.n, failureKey{m.PartitionID, m.TransactionID})
	}
}
