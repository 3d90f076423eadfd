package queen_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// tapped is a broker in mode m behind a spy, and a client of it.
func tapped(t *testing.T, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *testutil.Spy, *queen.Client) {
	t.Helper()
	return tappedWith(t, m, nil, opts...)
}

// tappedWith is tapped with extra client options.
func tappedWith(t *testing.T, m testmode.Mode, copts []queen.Option, opts ...queentest.Option) (*queentest.Server, *testutil.Spy, *queen.Client) {
	t.Helper()
	srv := m.Server(t, opts...)
	tap, url := testutil.NewSpy(t, srv.Handler())
	c, err := queen.New(url, append([]queen.Option{queen.WithRetry(3, time.Millisecond, 5*time.Millisecond)}, copts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, tap, c
}

// push pushes one item per data value to the queue's partition ("": the default one).
func push(t *testing.T, c *queen.Client, queue, partition string, data ...any) {
	t.Helper()
	items := make([]queen.PushItem, len(data))
	for i, d := range data {
		items[i] = queen.PushItem{Data: d}
	}
	b := c.Queue(queue)
	if partition != "" {
		b = b.Partition(partition)
	}
	if _, err := b.Push(testutil.Context(t), items...); err != nil {
		t.Fatal(err)
	}
}

// sentAcks are the ack items the SDK sent, from /ack, /ack/batch and transactions, in order.
func sentAcks(spy *testutil.Spy) []map[string]any {
	var out []map[string]any
	for _, r := range spy.All() {
		if !strings.Contains(r.Path, "/ack") && !strings.Contains(r.Path, "/transaction") {
			continue
		}
		var v any
		if json.Unmarshal(r.Body, &v) != nil {
			continue
		}
		collectAcks(v, &out)
	}
	return out
}

func collectAcks(v any, out *[]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["status"]; ok {
			if _, ok := v["transactionId"]; ok {
				*out = append(*out, v)
				return
			}
		}
		for _, e := range v {
			collectAcks(e, out)
		}
	case []any:
		for _, e := range v {
			collectAcks(e, out)
		}
	}
}

// statuses are the statuses of the acks the SDK sent, in order.
func statuses(tap *testutil.Spy) []string {
	var out []string
	for _, a := range sentAcks(tap) {
		out = append(out, a["status"].(string))
	}
	return out
}
