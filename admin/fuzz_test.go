package admin_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testmode"
)

// The fuzz targets hand admin's decoding of each introspection answer any status and body a
// broker might send. Whatever arrives, a call must not panic, must fail with an error that is
// not the caller's (ErrInvalidOption), must succeed only on a 2xx answer whose body is JSON (or
// empty), and what it returns must keep the promises of its documentation. The seeds are the
// answers captured from a 0.15 broker and those the reference broker gives, as 2.0 and as 0.15.

// fuzzStatuses are the statuses a fuzz input chooses among: successes, and refusals with and
// without a JSON body.
var fuzzStatuses = []int{200, 201, 204, 400, 404, 500}

// fuzzBroker is an Admin whose broker answers every request with the current input.
type fuzzBroker struct {
	admin *admin.Admin

	mu     sync.Mutex
	status int
	body   []byte
}

func newFuzzBroker(f *testing.F) *fuzzBroker {
	a, mt := mockAdmin(f)
	b := &fuzzBroker{admin: a}
	mt.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return httpmock.NewBytesResponse(b.status, b.body), nil
	})
	return b
}

// call bounds one fuzzed call: an answer, whatever it is, is decoded at once.
func call(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(func() {
		require.NoError(t, ctx.Err(), "the call outlived its answer")
		cancel()
	})
	return ctx
}

// answer makes every request answered with the status the input chooses and body; it returns
// that status.
func (b *fuzzBroker) answer(choice uint8, body []byte) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status, b.body = fuzzStatuses[int(choice)%len(fuzzStatuses)], body
	return b.status
}

// checkOutcome holds for every call: an error is the broker's fault, never the caller's; a
// success needs a 2xx answer whose body decodes as JSON, unless it is empty (204, or no body).
func checkOutcome(t *testing.T, status int, body []byte, err error) {
	t.Helper()
	if err != nil {
		require.NotErrorIs(t, err, queen.ErrInvalidOption)
		require.NotEmpty(t, err.Error())
		return
	}
	require.True(t, status >= 200 && status < 300, "a success from status %d", status)
	require.True(t, status == http.StatusNoContent || len(body) == 0 || json.Valid(body),
		"a success from a body that is not JSON: %q", body)
}

// seed015 adds the 0.15 captures whose file names start with one of prefixes, each with the
// status it was answered with (named in the file name when it is not 200). An excerpt (.ndjson,
// one element per line) is joined back into the array or object it was cut from.
func seed015(f *testing.F, prefixes ...string) {
	dir := filepath.Join("..", "testdata", "introspection015")
	entries, err := os.ReadDir(dir)
	require.NoError(f, err)
	seeded := 0
	for _, e := range entries {
		name := e.Name()
		if !hasAnyPrefix(name, prefixes) {
			continue
		}
		body := []byte(capture015(f, name))
		if strings.HasSuffix(name, ".ndjson") {
			open, end := "[", "]"
			if bytes.HasPrefix(body, []byte(`"`)) {
				open, end = "{", "}"
			}
			body = []byte(open + strings.ReplaceAll(string(body), "\n", ",") + end)
		}
		status := 200
		switch {
		case strings.Contains(name, ".404."):
			status = 404
		case strings.Contains(name, ".500."):
			status = 500
		}
		f.Add(statusChoice(status), body)
		seeded++
	}
	require.NotZero(f, seeded, "no capture starts with %q", prefixes)
	// The answers of a route the broker lacks, and of a broker that failed.
	f.Add(statusChoice(404), []byte(captured404))
	f.Add(statusChoice(200), []byte(capturedDBFailure))
	f.Add(statusChoice(204), []byte(nil))
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func statusChoice(status int) uint8 {
	for i, s := range fuzzStatuses {
		if s == status {
			return uint8(i)
		}
	}
	panic("no fuzz status " + http.StatusText(status))
}

// seedReference adds the reference broker's answers, as 2.0 and as 0.15, to the GET request
// path(state) makes of the lagState state: queue orders with two partitions, group slow behind
// on both and holding a lease, and a dead letter.
func seedReference(f *testing.F, path func(state fixture) string) {
	for _, m := range testmode.Modes {
		state := lagState(f, m)
		p := path(state)
		resp, err := http.Get(state.srv.URL() + p)
		require.NoError(f, err)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(f, err)
		require.Equal(f, http.StatusOK, resp.StatusCode, "%s answered %s", p, body)
		f.Add(statusChoice(resp.StatusCode), body)
	}
}

// withQuery is path with the query v.
func withQuery(path string, v url.Values) string { return path + "?" + v.Encode() }

func FuzzQueueList(f *testing.F) {
	seed015(f, "queues-", "namespace-")
	seedReference(f, func(fixture) string { return withQuery(route.QueueList.Path(), url.Values{"limit": {"1000"}}) })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		qs, err := b.admin.Queues(call(t))
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, qs)
		seen := map[string]bool{}
		for _, q := range qs {
			require.False(t, seen[q.Name], "queue %q listed twice", q.Name)
			seen[q.Name] = true
			require.Nil(t, q.Partitions, "the list reports partition counts only")
			if q.Approximate {
				require.Equal(t, int64(-1), q.Completed, "an approximate queue's unsent count is unknown")
			}
		}
	})
}

func FuzzQueueDetail(f *testing.F) {
	seed015(f, "queue-detail-", "queue-name-", "resource-queue-")
	seedReference(f, func(fixture) string { return route.QueueDetail.Path("orders") })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		info, err := b.admin.QueueInfo(call(t), "orders")
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, info.Partitions)
		require.Equal(t, int64(len(info.Partitions)), info.PartitionCount)
		defaultID, unnumbered := "", false
		for _, p := range info.Partitions {
			if p.Name == "Default" {
				defaultID = p.ID
			}
			unnumbered = unnumbered || p.LastOffset == -1
		}
		require.Equal(t, defaultID, info.Config.PartitionID, "the configuration's partition is the Default one")
		if info.Approximate {
			require.True(t, unnumbered, "an approximate queue has a partition without an offset")
		}
	})
}

func FuzzGroupList(f *testing.F) {
	seed015(f, "groups")
	seedReference(f, func(fixture) string { return route.GroupList.Path() })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		groups, err := b.admin.ConsumerGroups(call(t))
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, groups)
		for i, g := range groups {
			if i > 0 {
				require.Less(t, groups[i-1].Name, g.Name, "groups are listed once each, by name")
			}
			require.NotEmpty(t, g.Queues)
			for j, q := range g.Queues {
				if j > 0 {
					require.LessOrEqual(t, g.Queues[j-1].Queue, q.Queue, "a group's queues are by name")
				}
				require.Nil(t, q.Partitions, "the list reports no partitions")
				if q.Approximate {
					require.Equal(t, int64(-1), q.Lag, "an approximate lag is unknown")
				}
			}
		}
	})
}

func FuzzGroupDetail(f *testing.F) {
	seed015(f, "group-")
	seedReference(f, func(fixture) string { return route.GroupDetail.Path("slow") })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		g, err := b.admin.ConsumerGroup(call(t), "slow")
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.Equal(t, "slow", g.Name)
		for j, q := range g.Queues {
			if j > 0 {
				require.Less(t, g.Queues[j-1].Queue, q.Queue, "queues are listed once each, by name")
			}
			var lag, withLag int64
			var timeLag time.Duration
			cursorless := false
			for _, p := range q.Partitions {
				lag += p.Lag
				timeLag = max(timeLag, p.TimeLag)
				if p.Lag > 0 {
					withLag++
				}
				cursorless = cursorless || p.Cursor == -1
				if p.LeaseID != "" {
					require.True(t, p.Leased, "a lease id is shown only for a live lease")
				}
			}
			require.Equal(t, lag, q.Lag, "a queue's lag adds up its partitions'")
			require.Equal(t, timeLag, q.TimeLag, "a queue's time lag is its partitions' longest")
			require.Equal(t, withLag, q.PartitionsWithLag)
			if q.Approximate {
				require.True(t, cursorless, "an approximate queue has a partition without a cursor")
			}
		}
	})
}

func FuzzLagging(f *testing.F) {
	seed015(f, "lagging-")
	seedReference(f, func(fixture) string {
		return withQuery(route.Lagging.Path(), url.Values{"minLagSeconds": {"1"}, "queue": {"orders"}})
	})
	b := newFuzzBroker(f)
	q := admin.LagQuery{MinLag: time.Second, Queue: "orders"}
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		lag, err := b.admin.Lagging(call(t), q)
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, lag)
		for i, l := range lag {
			require.Equal(t, "orders", l.Queue, "the queue filter is applied")
			if i > 0 {
				prev := lag[i-1]
				order := cmp.Or(cmp.Compare(l.TimeLag, prev.TimeLag), cmp.Compare(prev.Group, l.Group),
					cmp.Compare(prev.Queue, l.Queue), cmp.Compare(prev.Partition, l.Partition))
				require.LessOrEqual(t, order, 0, "most lagging first, then by group, queue and partition")
			}
		}
	})
}

func FuzzMessages(f *testing.F) {
	seed015(f, "messages")
	seedReference(f, func(fixture) string {
		return withQuery(route.Messages.Path(), url.Values{"queue": {"orders"}, "limit": {"200"}, "payload": {"true"},
			"from": {"1970-01-01T00:00:00Z"}})
	})
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		msgs, err := b.admin.Messages(call(t), admin.MessageQuery{Queue: "orders"})
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, msgs)
		require.LessOrEqual(t, len(msgs), len(body), "no message is invented")
	})
}

func FuzzMessage(f *testing.F) {
	seed015(f, "message-")
	seedReference(f, func(state fixture) string {
		msgs, err := state.admin.Messages(context.Background(), admin.MessageQuery{Queue: "orders", Limit: 1})
		require.NoError(f, err)
		require.Len(f, msgs, 1)
		return route.Message.Path(msgs[0].PartitionID, msgs[0].TransactionID)
	})
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		m, err := b.admin.Message(call(t), p0ID, "p0-1")
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		if m.Data != nil {
			require.True(t, json.Valid(m.Data), "the payload is JSON: %q", m.Data)
		}
	})
}

func FuzzOverview(f *testing.F) {
	seed015(f, "overview")
	seedReference(f, func(fixture) string { return route.Overview.Path() })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		_, err := b.admin.Overview(call(t))
		checkOutcome(t, status, body, err)
	})
}

func FuzzHealth(f *testing.F) {
	seed015(f, "health")
	seedReference(f, func(fixture) string { return route.Health.Path() })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		_, err := b.admin.Health(call(t))
		checkOutcome(t, status, body, err)
	})
}

func FuzzDeadLetters(f *testing.F) {
	seed015(f, "messages-dlq")
	f.Add(statusChoice(200), []byte(capturedDLQ))
	f.Add(statusChoice(200), []byte(capturedEmptyDLQ))
	seedReference(f, func(fixture) string { return withQuery(route.DeadLetters.Path(), url.Values{"queue": {"orders"}}) })
	b := newFuzzBroker(f)
	f.Fuzz(func(t *testing.T, choice uint8, body []byte) {
		status := b.answer(choice, body)
		page, err := b.admin.DeadLetters(call(t), admin.DLQQuery{Queue: "orders", Limit: 2})
		checkOutcome(t, status, body, err)
		if err != nil {
			return
		}
		require.NotNil(t, page.DeadLetters)
		for _, dl := range page.DeadLetters {
			if dl.ID != "" {
				require.NotEmpty(t, dl.MessageID, "a dead letter without a message id of its own takes its id")
			}
			if dl.Data != nil {
				require.True(t, json.Valid(dl.Data), "the payload is JSON: %q", dl.Data)
			}
		}
	})
}
