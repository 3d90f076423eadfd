package otelqueen_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/otelqueen"
	"github.com/queenmq/queen-go/queentest"
)

// Hooks record every client operation by name, the messages sent and the retries, on both
// broker generations; administration (a ping) is not a messaging operation and is left out.
func TestClientOperationsAreRecorded(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		r := newRig(t, m.Options())
		r.srv.Fail(queentest.Fault{Route: "push", Status: 503})
		q := r.client.Queue("ops")
		_, err := q.Push(t.Context(), queen.PushItem{Data: 1}, queen.PushItem{Data: 2})
		require.NoError(t, err)
		msgs, err := q.Batch(2).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		_, err = msgs[0].Renew(t.Context(), 0)
		require.NoError(t, err)
		_, err = r.client.Transaction().Ack(msgs[0], queen.StatusCompleted).Push("ops-out", queen.PushItem{Data: 3}).Commit(t.Context())
		require.NoError(t, err)
		require.NoError(t, msgs[1].Ack(t.Context()))
		_, err = r.client.Ping(t.Context())
		require.NoError(t, err)

		rm := r.metrics(t)
		ops := metricNamed(t, rm, "messaging.client.operation.duration")
		assert.Equal(t, map[string]uint64{"push": 2, "pop": 1, "renew": 1, "transaction": 1, "ack": 1},
			histogramCounts(t, ops, "messaging.operation.name"))
		assert.Equal(t, map[string]uint64{"": 5, "5xx": 1}, histogramCounts(t, ops, "error.type"))
		assert.Equal(t, map[string]uint64{"send": 2, "receive": 1, "settle": 1, "": 2},
			histogramCounts(t, ops, "messaging.operation.type"))
		assert.Equal(t, map[string]int64{"push": 2, "transaction": 1},
			sumBy(t, metricNamed(t, rm, "messaging.client.sent.messages"), "messaging.operation.name"))
		assert.Equal(t, map[string]int64{"push": 1},
			sumBy(t, metricNamed(t, rm, "messaging.queen.client.retries"), "messaging.operation.name"))
		for _, key := range []string{"server.address", "server.port", "messaging.system"} {
			assert.NotContains(t, histogramCounts(t, ops, key), "", key)
		}
		assert.True(t, strings.HasPrefix(r.srv.URL(), "http://127.0.0.1:"))
		assert.Equal(t, map[string]uint64{"127.0.0.1": 6}, histogramCounts(t, ops, "server.address"))
	})
}

// Hooks name a request by the operation the SDK reports, whatever its route: an operation
// outside messaging (admin) is not recorded, and only answered pushes and transactions count
// as messages sent.
func TestHooksNameRequestsByTheirOperation(t *testing.T) {
	t.Parallel()
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	hooks := otelqueen.Hooks(otelqueen.WithMeterProvider(mp))
	for _, e := range []queen.RequestEvent{
		{Operation: "pop", Route: "/somewhere/else", Status: 200, Attempt: 1},
		{Operation: "push", Status: 200, Attempt: 1, Items: 3},
		{Operation: "push", Status: 500, Attempt: 2, Items: 4},
		{Operation: "transaction", Status: 200, Attempt: 1, Items: 2},
		{Operation: "renew", Err: context.DeadlineExceeded, Attempt: 1},
		{Operation: "renew", Err: io.ErrUnexpectedEOF, Attempt: 1},
		{Operation: "pop", Status: 404, Attempt: 1},
		{Operation: "ack", Status: 200, Attempt: 1, Items: 5},
		{Operation: "admin", Route: "/api/v1/pop", Status: 200, Attempt: 3},
	} {
		e.Server, e.Method, e.Duration = "https://broker.example", "GET", time.Millisecond
		hooks.Request(e)
	}
	r := &rig{reader: reader}
	rm := r.metrics(t)
	ops := metricNamed(t, rm, "messaging.client.operation.duration")
	assert.Equal(t, map[string]uint64{"pop": 2, "push": 2, "transaction": 1, "renew": 2, "ack": 1},
		histogramCounts(t, ops, "messaging.operation.name"))
	assert.Equal(t, map[string]uint64{"": 4, "5xx": 1, "4xx": 1, "timeout": 1, "network": 1}, histogramCounts(t, ops, "error.type"),
		"error answers by status class, and why no answer came")
	assert.Equal(t, map[string]uint64{"443": 8}, histogramCounts(t, ops, "server.port"))
	assert.Equal(t, map[string]int64{"push": 3, "transaction": 2},
		sumBy(t, metricNamed(t, rm, "messaging.client.sent.messages"), "messaging.operation.name"))
	assert.Equal(t, map[string]int64{"push": 1},
		sumBy(t, metricNamed(t, rm, "messaging.queen.client.retries"), "messaging.operation.name"))
}
