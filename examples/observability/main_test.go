package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/examples/internal/exampleenv"
	"github.com/queenmq/queen-go/examples/internal/exampletest"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The example closes its client, its broker and its metrics server: nothing may keep running.
func TestMain(m *testing.M) { testmode.Main(m) }

// The worker prints its spans, with the failures' reasons, and its process metrics.
func TestObservabilityPrintsSpansAndMetrics(t *testing.T) {
	demo := func(ctx context.Context, out io.Writer) error { return run(ctx, []string{"-demo", "10"}, out) }
	exampletest.ForEachMode(t, func(t *testing.T, _ testmode.Mode) {
		out := exampletest.Output(t, demo, "metrics on http://127.0.0.1:", "orders handled: 10 completed, 2 declined once",
			`"Name":"process observability-orders"`, `"Name":"checkout"`, "messaging_process_duration_seconds_count{")
		assert.Contains(t, out, `"Description":"card declined"`, "a failed span says why")
	})
}

// The demo as "go run ." runs it, without its spans (whose ids and times change at every run),
// prints the same on both broker generations: every order completed, the four declined ones
// redelivered once (so four failures in one partition, one more than the retry limit: on a
// broker whose retry count is the partition's, the fourth would be dead-lettered), and the
// same counts in the metrics.
func TestObservabilityPrintsTheSameOnBothGenerations(t *testing.T) {
	demo := func(ctx context.Context, out io.Writer) error {
		return run(ctx, []string{"-traces=false"}, out)
	}
	got := exampletest.SameInBothModes(t, demo, "orders handled: 20 completed, 4 declined once\n")
	var counts []string
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "messaging_process_duration_seconds_count{") {
			counts = append(counts, line)
		}
	}
	require.Len(t, counts, 2, "one series per outcome:\n%s", got)
	for _, c := range counts {
		switch {
		case strings.Contains(c, `messaging_queen_outcome="completed"`):
			assert.True(t, strings.HasSuffix(c, " 20"), c)
		case strings.Contains(c, `messaging_queen_outcome="failed"`):
			assert.True(t, strings.HasSuffix(c, " 4"), c)
			assert.Contains(t, c, `error_type="_OTHER"`)
		default:
			t.Errorf("an outcome the demo has not: %s", c)
		}
	}
}

// A scrape of /metrics finds the process duration histogram with the conventions' attributes,
// and the client's operation metrics, on both broker generations.
func TestMetricsEndpointServesTheProcessDuration(t *testing.T) {
	exampletest.ForEachMode(t, func(t *testing.T, _ testmode.Mode) {
		t.Setenv("QUEEN_URL", "")
		tel, err := newTelemetry(io.Discard)
		require.NoError(t, err)
		defer func() { _ = tel.shutdown(context.Background()) }()
		srv := httptest.NewServer(tel.metricsHandler())
		defer srv.Close()

		client, closeAll, err := exampleenv.Connect(tel.clientOptions()...)
		require.NoError(t, err)
		defer closeAll()
		require.NoError(t, work(t.Context(), client, tel.tracer.Tracer("checkout"), 5, io.Discard))

		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		text := string(body)
		assert.Contains(t, text, "# TYPE messaging_process_duration_seconds histogram")
		var completed, failed string
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "messaging_process_duration_seconds_count{") {
				continue
			}
			for _, label := range []string{`messaging_system="queen"`, `messaging_operation_name="process"`,
				`messaging_destination_name="observability-orders"`, `messaging_consumer_group_name="billing"`} {
				assert.Contains(t, line, label)
			}
			switch {
			case strings.Contains(line, `messaging_queen_outcome="completed"`):
				completed = line
			case strings.Contains(line, `messaging_queen_outcome="failed"`):
				failed = line
				assert.Contains(t, line, `error_type="_OTHER"`, "a handler's own error")
			}
		}
		assert.True(t, strings.HasSuffix(completed, " 5"), "five orders completed: %q", completed)
		assert.True(t, strings.HasSuffix(failed, " 1"), "one declined once: %q", failed)
		assert.Contains(t, text, `messaging_client_operation_duration_seconds_count{`)
		assert.Contains(t, text, `messaging_client_sent_messages_total{`)
		assert.Contains(t, text, `messaging_client_consumed_messages_total{`)
	})
}
