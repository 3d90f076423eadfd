package queen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// API.md RenewLease: "extended every `every` (default: half of LeaseTime when set, else 10s),
// each time by LeaseTime when set, else by 60s".
func TestRenewLeaseDefaults_R138(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1")
	h := eachHandling(func(context.Context, *Message) error { return nil })
	cases := []struct {
		name          string
		b             QueueBuilder
		every, extend time.Duration
	}{
		{"no LeaseTime", c.Queue("q").RenewLease(true, 0), 10 * time.Second, 60 * time.Second},
		{"LeaseTime", c.Queue("q").LeaseTime(20*time.Second).RenewLease(true, 0), 10 * time.Second, 20 * time.Second},
		{"every set", c.Queue("q").LeaseTime(20*time.Second).RenewLease(true, 3*time.Second), 3 * time.Second, 20 * time.Second},
		{"every set, no LeaseTime", c.Queue("q").RenewLease(true, 4*time.Second), 4 * time.Second, 60 * time.Second},
	}
	for _, tc := range cases {
		l := newConsumer(t.Context(), tc.b, h)
		assert.True(t, l.renew, tc.name)
		assert.Equal(t, tc.every, l.renewEvery, tc.name)
		assert.Equal(t, tc.extend, l.renewExtend, tc.name)
	}
	assert.False(t, newConsumer(t.Context(), c.Queue("q"), h).renew, "off by default")
}
