package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/queentest"
)

// fixture is a reference broker on a manual clock, a client, and an Admin on it.
type fixture struct {
	srv    *queentest.Server
	client *queen.Client
	admin  *admin.Admin
}

// newFixture is newFixtureIn with the broker as 2.0.
func newFixture(t testing.TB) fixture {
	t.Helper()
	return newFixtureIn(t, testmode.Modes[0])
}

// newFixtureIn is a fixture with the broker in mode m (2.0 or 0.15).
func newFixtureIn(t testing.TB, m testmode.Mode) fixture {
	t.Helper()
	srv := m.Server(t, queentest.WithManualClock())
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return fixture{srv: srv, client: client, admin: admin.New(client)}
}

// push stores one message per value in queue's partition (empty: Default), data {"n":v}.
func (f fixture) push(t testing.TB, queue, partition string, values ...int) {
	t.Helper()
	items := make([]queen.PushItem, len(values))
	for i, v := range values {
		items[i] = queen.PushItem{Data: map[string]int{"n": v}}
	}
	_, err := f.client.Queue(queue).Partition(partition).Push(context.Background(), items...)
	require.NoError(t, err)
}

// pop leases up to batch messages of queue for group, reading from the oldest message.
func (f fixture) pop(t testing.TB, queue, group string, batch int) []*queen.Message {
	t.Helper()
	b := f.client.Queue(queue).Batch(batch)
	if group != "" {
		b = b.Group(group).SubscriptionMode(queen.SubscribeAll)
	}
	msgs, err := b.Pop(context.Background())
	require.NoError(t, err)
	return msgs
}

// values decodes the {"n":v} payloads of msgs.
func values(t *testing.T, msgs []*queen.Message) []int {
	t.Helper()
	out := make([]int, 0, len(msgs))
	for _, m := range msgs {
		var d struct{ N int }
		require.NoError(t, m.Decode(&d))
		out = append(out, d.N)
	}
	return out
}

func (f fixture) ackAll(t testing.TB, msgs []*queen.Message) {
	t.Helper()
	items := make([]queen.AckItem, len(msgs))
	for i, m := range msgs {
		items[i] = queen.AckItem{Message: m, Status: queen.StatusCompleted}
	}
	results, err := f.client.AckBatch(context.Background(), items)
	require.NoError(t, err)
	for _, r := range results {
		require.True(t, r.Success, "ack refused: %s", r.Error)
	}
}

// fileDeadLetters pushes one message per value and has group dead-letter each of them.
func (f fixture) fileDeadLetters(t testing.TB, queue, group string, values ...int) {
	t.Helper()
	f.push(t, queue, "", values...)
	for range values {
		msgs := f.pop(t, queue, group, 1)
		require.Len(t, msgs, 1)
		require.NoError(t, msgs[0].DeadLetter(context.Background(), fmt.Errorf("poison %s", msgs[0].Data)))
	}
}

// unknownOn015 is a count as the mode's broker reports it: -1 (unknown) on 0.15, which sends
// no total.
func unknownOn015(m testmode.Mode, n int) int {
	if m.V015 {
		return -1
	}
	return n
}

// lagState is a fixture in mode m with queue orders (partitions p0 with 4 messages, p1 with 3)
// in namespace shop: group slow finished p0's first two and holds a lease on p1's first two;
// queue mode dead-lettered p0's first; everything is read 30 s after the pushes.
func lagState(t testing.TB, m testmode.Mode) fixture {
	t.Helper()
	f := newFixtureIn(t, m)
	ctx := context.Background()
	require.NoError(t, f.admin.ConfigureQueue(ctx, "orders", admin.QueueOptions{
		LeaseTime: 600 * time.Second, RetryLimit: new(0), Namespace: "shop", Task: "fulfil"}))
	f.push(t, "orders", "p0", 0, 1, 2, 3)
	f.push(t, "orders", "p1", 0, 1, 2)
	slow := f.client.Queue("orders").Group("slow").SubscriptionMode(queen.SubscribeAll).Batch(2)
	msgs, err := slow.Partition("p0").Pop(ctx)
	require.NoError(t, err)
	f.ackAll(t, msgs)
	msgs, err = slow.Partition("p1").Pop(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	msgs, err = f.client.Queue("orders").Partition("p0").Batch(1).Pop(ctx)
	require.NoError(t, err)
	require.NoError(t, msgs[0].Nack(ctx, errors.New("boom")))
	f.srv.Advance(30 * time.Second)
	return f
}

// broker is the base URL of the mock transport's broker.
const broker = "http://broker.test"

// mockAdmin returns an Admin whose client talks to a mock transport only, and never retries.
func mockAdmin(t testing.TB) (*admin.Admin, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	client, err := queen.New(broker, queen.WithHTTPClient(&http.Client{Transport: mt}), queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return admin.New(client), mt
}
