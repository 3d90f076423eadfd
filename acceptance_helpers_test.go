package queen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// seen is one request that reached the broker, as the acceptance tests record it.
type seen struct {
	Method, Path, Query string
	Body                []byte
}

// wiretap stands between the SDK and a reference broker and keeps every request.
type wiretap struct {
	srv  *queentest.Server
	mu   sync.Mutex
	reqs []seen
}

func (w *wiretap) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.reqs = append(w.reqs, seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body})
	w.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.srv.Handler().ServeHTTP(rw, r)
}

func (w *wiretap) all() []seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seen(nil), w.reqs...)
}

// count is the number of recorded requests whose path contains part.
func (w *wiretap) count(part string) int {
	n := 0
	for _, r := range w.all() {
		if strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}

// acks are the ack items the SDK sent, from /ack, /ack/batch and transactions, in order.
func (w *wiretap) acks() []map[string]any {
	var out []map[string]any
	for _, r := range w.all() {
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

// tapped is a broker in mode m behind a wiretap, and a client of it.
func tapped(t *testing.T, m testmode.Mode, opts ...queentest.Option) (*queentest.Server, *wiretap, *queen.Client) {
	t.Helper()
	srv := m.Server(t, opts...)
	tap := &wiretap{srv: srv}
	hs := httptest.NewServer(tap)
	t.Cleanup(hs.Close)
	c, err := queen.New(hs.URL, queen.WithRetry(3, time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, tap, c
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

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
	if _, err := b.Push(ctxFor(t), items...); err != nil {
		t.Fatal(err)
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// tappedWith is tapped with extra client options.
func tappedWith(t *testing.T, m testmode.Mode, copts []queen.Option, opts ...queentest.Option) (*queentest.Server, *wiretap, *queen.Client) {
	t.Helper()
	srv := m.Server(t, opts...)
	tap := &wiretap{srv: srv}
	hs := httptest.NewServer(tap)
	t.Cleanup(hs.Close)
	c, err := queen.New(hs.URL, append([]queen.Option{queen.WithRetry(3, time.Millisecond, 5*time.Millisecond)}, copts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, tap, c
}

// statuses are the statuses of the acks the SDK sent, in order.
func statuses(tap *wiretap) []string {
	var out []string
	for _, a := range tap.acks() {
		out = append(out, a["status"].(string))
	}
	return out
}
