package admin_test

import (
	"context"
	"fmt"
	"testing"

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

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureIn(t, testmode.Modes[0])
}

// newFixtureIn is newFixture with the broker in mode m (2.0 or 0.15).
func newFixtureIn(t *testing.T, m testmode.Mode) fixture {
	t.Helper()
	srv := m.Server(t, queentest.WithManualClock())
	client, err := queen.New(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return fixture{srv: srv, client: client, admin: admin.New(client)}
}

// push stores one message per value in queue's partition (empty: Default), data {"n":v}.
func (f fixture) push(t *testing.T, queue, partition string, values ...int) {
	t.Helper()
	items := make([]queen.PushItem, len(values))
	for i, v := range values {
		items[i] = queen.PushItem{Data: map[string]int{"n": v}}
	}
	_, err := f.client.Queue(queue).Partition(partition).Push(context.Background(), items...)
	require.NoError(t, err)
}

// pop leases up to batch messages of queue for group, reading from the oldest message.
func (f fixture) pop(t *testing.T, queue, group string, batch int) []*queen.Message {
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

func (f fixture) ackAll(t *testing.T, msgs []*queen.Message) {
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
func (f fixture) fileDeadLetters(t *testing.T, queue, group string, values ...int) {
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
