package queen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// samples is how often each jittered wait is drawn.
const samples = 200

// A handler's backoff is at least min·2^(failures−1) and at most 25 % more, never above max.
func TestHandlerBackoffDoublesWithUpwardJitterUnderItsCap(t *testing.T) {
	t.Parallel()
	p := handlerBackoff(100*time.Millisecond, time.Second)
	for n, base := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		base *= time.Millisecond
		for range samples {
			d := p.wait(n + 1)
			assert.GreaterOrEqual(t, d, base, "failure %d", n+1)
			assert.LessOrEqual(t, d, min(base*5/4, time.Second), "failure %d", n+1)
		}
	}
	assert.Equal(t, time.Second, p.wait(1<<20), "a long run of failures stays at the cap")
	assert.Zero(t, handlerBackoff(0, 0).wait(3), "RetryBackoff(0, 0) waits nothing")
}

// RetryAfter(d) waits d plus up to 25 %, whatever the cap of RetryBackoff.
func TestRetryAfterWaitsItsOwnTimeWithUpwardJitter(t *testing.T) {
	t.Parallel()
	for range samples {
		d := retryAfterBackoff(time.Minute).wait(1)
		assert.GreaterOrEqual(t, d, time.Minute)
		assert.LessOrEqual(t, d, time.Minute*5/4)
	}
	assert.Zero(t, retryAfterBackoff(0).wait(1))
}

// The transport's waits grow by half each retry, jittered ±50 %, and stay within
// [minWait, maxWait].
func TestTransportBackoffStaysWithinItsBounds(t *testing.T) {
	t.Parallel()
	p := transportBackoff(100*time.Millisecond, time.Second)
	interval := 100 * time.Millisecond
	for n := 1; n <= 10; n++ {
		for range samples {
			d := p.wait(n)
			assert.GreaterOrEqual(t, d, max(interval/2, 100*time.Millisecond), "retry %d", n)
			assert.LessOrEqual(t, d, min(interval*3/2+1, time.Second), "retry %d", n)
		}
		interval = min(time.Duration(float64(interval)*1.5), time.Second)
	}
}

// A loop's curves double from their first wait to their largest, each wait ±50 %, and start
// over after a success.
func TestLoopBackoffsDoubleAndStartOver(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]backoffPolicy{
		"ack": loopAckBackoff, "quiet": quietPollBackoff, "outage": popOutageBackoff,
	} {
		w := p.waits()
		interval := p.first
		for n := 1; n <= 10; n++ {
			d := w.next()
			assert.GreaterOrEqual(t, d, interval/2, "%s: try %d", name, n)
			assert.LessOrEqual(t, d, interval*3/2+1, "%s: try %d", name, n)
			interval = min(2*interval, p.most)
		}
		w.reset()
		assert.LessOrEqual(t, w.next(), p.first*3/2+1, "%s: after a success", name)
	}
}

// The renewer tries a failed extend again after a quarter of its period (plus a millisecond),
// at most a second, every time.
func TestRenewRetryIsShortAndSteady(t *testing.T) {
	t.Parallel()
	assert.Equal(t, time.Second, renewRetryBackoff(10*time.Second).wait(1))
	assert.Equal(t, 501*time.Millisecond, renewRetryBackoff(2*time.Second).wait(1))
	assert.Equal(t, 501*time.Millisecond, renewRetryBackoff(2*time.Second).wait(5))
}
