package queen

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Every wait the SDK makes between two tries of something follows one policy: an exponential
// curve that starts at a first wait and multiplies it after each try, up to a largest wait,
// with jitter so that clients that failed together do not try again together. The curves
// differ only in their figures, all set here:
//
//   - a handler's failure or retry (RetryBackoff): min·2^(failures−1), capped at max, plus up to
//     25 % (jitter only lengthens a wait, and the cap still holds); RetryAfter(d): d plus the
//     same jitter, uncapped;
//   - the transport's retries of one request (WithRetry), and the Producer's resends of a push:
//     minWait growing by half each retry up to maxWait, ±50 %, kept within [minWait, maxWait];
//   - a consume loop's resent ack: 100ms doubling up to 2s, ±50 %, for as long as the lease holds;
//   - a consume loop's pops answered "nothing" without waiting: 50ms doubling up to 1s, ±50 %;
//   - a consume loop's failed pops (a broker outage): 250ms doubling up to 10s, ±50 %;
//   - the lease renewer's retry of an extend that got no answer: a quarter of the renewal period
//     (plus a millisecond), at most a second, every time: the lease must not run out meanwhile.

// backoffPolicy is one curve of waits. The zero jitter fields give the curve itself.
type backoffPolicy struct {
	first, most time.Duration // the first wait, and the largest the curve grows to
	growth      float64       // each wait is the one before times growth (1: always first)
	spread      float64       // a wait is moved at random by up to ±spread of it
	lengthen    float64       // or: a wait is lengthened at random by up to that much of it
	capped      bool          // a jittered wait is kept within [first, most]
}

// The curves of a consume loop and of the lease renewer.
var (
	loopAckBackoff   = backoffPolicy{first: 100 * time.Millisecond, most: 2 * time.Second, growth: 2, spread: 0.5}
	quietPollBackoff = backoffPolicy{first: 50 * time.Millisecond, most: time.Second, growth: 2, spread: 0.5}
	popOutageBackoff = backoffPolicy{first: 250 * time.Millisecond, most: 10 * time.Second, growth: 2, spread: 0.5}
)

// handlerBackoff is RetryBackoff(min, max): how long a message waits after its handler's
// failures-th unsuccessful call in a row.
func handlerBackoff(min, max time.Duration) backoffPolicy {
	return backoffPolicy{first: min, most: max, growth: 2, lengthen: 0.25, capped: true}
}

// retryAfterBackoff is RetryAfter(d)'s wait: d, lengthened like a handler's backoff.
func retryAfterBackoff(d time.Duration) backoffPolicy {
	return backoffPolicy{first: d, most: d, growth: 1, lengthen: 0.25}
}

// transportBackoff is WithRetry(_, minWait, maxWait): the waits between the tries of a request.
func transportBackoff(minWait, maxWait time.Duration) backoffPolicy {
	return backoffPolicy{first: minWait, most: maxWait, growth: backoff.DefaultMultiplier,
		spread: backoff.DefaultRandomizationFactor, capped: true}
}

// renewRetryBackoff is the renewer's wait after an extend of a lease renewed every `every` got
// no answer.
func renewRetryBackoff(every time.Duration) backoffPolicy {
	d := min(every/4+time.Millisecond, time.Second)
	return backoffPolicy{first: d, most: d, growth: 1}
}

// wait is the nth wait of the curve (n ≥ 1), jittered; 0 for a curve that starts at 0.
func (p backoffPolicy) wait(n int) time.Duration {
	if p.first <= 0 {
		return 0
	}
	curve := p.exponential(0)
	d := curve.NextBackOff()
	for i := 1; i < n && d < p.most; i++ {
		d = curve.NextBackOff()
	}
	switch {
	case p.lengthen > 0:
		d += rand.N(time.Duration(float64(d)*p.lengthen) + 1)
	case p.spread > 0:
		at := p.exponential(p.spread)
		at.InitialInterval = d
		at.Reset()
		d = at.NextBackOff()
	}
	if p.capped {
		d = min(max(d, p.first), p.most)
	}
	return d
}

// exponential is the curve as cenkalti's backoff draws it, with the given randomization.
func (p backoffPolicy) exponential(randomization float64) *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.first),
		backoff.WithMaxInterval(max(p.most, p.first)),
		backoff.WithMultiplier(p.growth),
		backoff.WithRandomizationFactor(randomization),
		backoff.WithMaxElapsedTime(0),
	)
}

// backoffWaits walks a curve one try at a time, for a loop that waits after each failure and
// starts over after a success.
type backoffWaits struct {
	policy backoffPolicy
	tries  int
}

func (p backoffPolicy) waits() *backoffWaits { return &backoffWaits{policy: p} }

// next is the wait after one more failed try.
func (w *backoffWaits) next() time.Duration {
	w.tries++
	return w.policy.wait(w.tries)
}

// reset starts the curve over: the last try succeeded.
func (w *backoffWaits) reset() { w.tries = 0 }
