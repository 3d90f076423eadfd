package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// spiedFixture is a fixture in mode m whose client talks to the broker through a spy.
func spiedFixture(t *testing.T, m testmode.Mode) (fixture, *testutil.Spy) {
	t.Helper()
	srv := m.Server(t)
	spy, url := testutil.NewSpy(t, srv.Handler())
	client, err := queen.New(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return fixture{srv: srv, client: client, admin: admin.New(client)}, spy
}

// sentOptions decodes the options of the last configure the spy saw.
func sentOptions(t *testing.T, spy *testutil.Spy) map[string]any {
	t.Helper()
	var sent []testutil.Request
	for _, r := range spy.All() {
		if r.Route.Pattern == route.Configure.Pattern {
			sent = append(sent, r)
		}
	}
	require.NotEmpty(t, sent, "no configure was sent")
	var body struct{ Options map[string]any }
	require.NoError(t, json.Unmarshal(sent[len(sent)-1].Body, &body))
	return body.Options
}

// UpdateQueue changes what its function changes and keeps every other option and both labels,
// on 0.15 too, where a configure resets whatever it is not sent.
func TestUpdateQueueKeepsWhatItDoesNotChange(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f, spy := spiedFixture(t, mode)
		ctx := context.Background()
		require.NoError(t, f.admin.ConfigureQueue(ctx, "orders", admin.QueueOptions{
			LeaseTime: 30 * time.Second, RetryLimit: new(5), DeadLetterQueue: new(false),
			Namespace: "shop", Task: "bill", RetryDelay: 2 * time.Second, TTL: 2 * time.Hour,
		}))
		before, err := f.admin.QueueInfo(ctx, "orders")
		require.NoError(t, err)

		var seen admin.QueueOptions
		require.NoError(t, f.admin.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) {
			seen = *o
			o.RetryLimit = new(1)
		}))

		assert.Equal(t, 30*time.Second, seen.LeaseTime)
		assert.Equal(t, new(5), seen.RetryLimit)
		assert.Equal(t, "shop", seen.Namespace)
		assert.Equal(t, "bill", seen.Task)
		assert.Equal(t, 2*time.Second, seen.RetryDelay)
		assert.Equal(t, 2*time.Hour, seen.TTL)
		after, err := f.admin.QueueInfo(ctx, "orders")
		require.NoError(t, err)
		want := before.Config
		want.RetryLimit = 1
		assert.Equal(t, want, after.Config, "only the retry limit changed")
		assert.Equal(t, 30*time.Second, after.Config.LeaseTime)
		assert.Equal(t, "shop", after.Namespace)
		assert.Equal(t, "bill", after.Task)
		sent := sentOptions(t, spy)
		assert.EqualValues(t, 2000, sent["retryDelay"], "milliseconds, as read back")
		assert.EqualValues(t, 7200, sent["ttl"])
		assert.EqualValues(t, 1, sent["retryLimit"])
	})
}

// The options a 2.0 broker stores that QueueOptions has no field for are sent back unchanged.
func TestUpdateQueueSendsBackOptionsItHasNoFieldFor(t *testing.T) {
	t.Parallel()
	f, spy := spiedFixture(t, testmode.Modes[0])
	ctx := context.Background()
	raw := json.RawMessage(`{"queue":"orders","options":{"leaseTime":45,"priority":7,"delayedProcessing":5,"windowBuffer":3}}`)
	require.NoError(t, f.client.Do(ctx, "POST", route.Configure.Path(), nil, raw, nil))

	require.NoError(t, f.admin.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) {
		assert.Equal(t, 5*time.Second, o.DelayedProcessing)
		o.LeaseTime = 90 * time.Second
	}))

	sent := sentOptions(t, spy)
	assert.EqualValues(t, 90, sent["leaseTime"])
	assert.EqualValues(t, 7, sent["priority"])
	assert.EqualValues(t, 5, sent["delayedProcessing"])
	assert.EqualValues(t, 3, sent["windowBuffer"])
}

// A queue that does not exist yet is created from the broker's defaults with the change.
func TestUpdateQueueCreatesAMissingQueue(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		f := newFixtureIn(t, mode)
		ctx := context.Background()
		var seen admin.QueueOptions
		require.NoError(t, f.admin.UpdateQueue(ctx, "fresh", func(o *admin.QueueOptions) {
			seen = *o
			o.RetryLimit = new(0)
		}))
		assert.Equal(t, admin.QueueOptions{}, seen, "a new queue starts from the broker's defaults")
		info, err := f.admin.QueueInfo(ctx, "fresh")
		require.NoError(t, err)
		assert.Equal(t, 0, info.Config.RetryLimit)
	})
}

// A nil change, a bad name, or a change that sets a bad value are refused and configure
// nothing.
func TestUpdateQueueRefusesBadArguments(t *testing.T) {
	t.Parallel()
	f, spy := spiedFixture(t, testmode.Modes[0])
	ctx := context.Background()
	require.ErrorIs(t, f.admin.UpdateQueue(ctx, "orders", nil), queen.ErrInvalidOption)
	require.ErrorIs(t, f.admin.UpdateQueue(ctx, "", func(*admin.QueueOptions) {}), queen.ErrInvalidOption)
	assert.Empty(t, spy.All(), "nothing is sent for a nil change or an empty name")

	err := f.admin.UpdateQueue(ctx, "orders", func(o *admin.QueueOptions) { o.LeaseTime = 1500 * time.Millisecond })
	require.ErrorIs(t, err, queen.ErrInvalidOption)
	assert.Zero(t, spy.Count(route.Configure))
}

// A read that fails is reported, and nothing is configured from a guess.
func TestUpdateQueueConfiguresNothingWhenTheReadFails(t *testing.T) {
	t.Parallel()
	srv := queentest.NewServer(t)
	spy, url := testutil.NewSpy(t, srv.Handler())
	spy.Override(func(r *http.Request) (int, bool) { return 503, r.Method == "GET" })
	client, err := queen.New(url, queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })

	changed := false
	err = admin.New(client).UpdateQueue(context.Background(), "orders", func(*admin.QueueOptions) { changed = true })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reading its options")
	assert.False(t, changed)
	assert.Zero(t, spy.Count(route.Configure))
}
