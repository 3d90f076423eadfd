package queentest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// waitIdleAsync runs WaitIdle in the background; its result arrives on the channel.
func waitIdleAsync(srv *Server, ctx context.Context, queue, group string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- srv.WaitIdle(ctx, queue, group) }()
	return done
}

// stillWaiting proves WaitIdle has not returned: a WaitIdle started now with a short deadline
// is still waiting when the deadline comes, and the background one has not returned.
func stillWaiting(t *testing.T, srv *Server, done <-chan error, queue, group string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := srv.WaitIdle(ctx, queue, group)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitIdle = %v, want it to wait until its deadline", err)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitIdle returned %v too early", err)
	default:
	}
}

func TestWaitIdleReturnsOnceEverythingIsAcked(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.PushN("q", "", "m", 2)
	done := waitIdleAsync(srv, t.Context(), "q", "workers")
	res := c.MustPop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "workers", "subscriptionMode", "all", "batch", "2"))
	// The first ack leaves one message leased: a handler holding its lease keeps WaitIdle waiting.
	c.AckBatch(map[string]any{"consumerGroup": "workers", "acknowledgments": []map[string]any{
		{"transactionId": res.Messages[0].TransactionID, "partitionId": res.PartitionID, "leaseId": res.LeaseID, "status": "completed"},
	}})
	stillWaiting(t, srv, done, "q", "workers")
	if lag := srv.Lag("q", "workers"); lag != 1 {
		t.Fatalf("Lag = %d, want 1", lag)
	}
	c.AckBatch(map[string]any{"consumerGroup": "workers", "acknowledgments": []map[string]any{
		{"transactionId": res.Messages[1].TransactionID, "partitionId": res.PartitionID, "leaseId": res.LeaseID, "status": "completed"},
	}})
	if err := <-done; err != nil {
		t.Fatalf("WaitIdle = %v after the last ack", err)
	}
	// Another group has done nothing yet: it is not idle.
	stillWaiting(t, srv, make(chan error), "q", "other")
}

func TestWaitIdleWaitsForALeaseThatExpires(t *testing.T) {
	t.Parallel()
	srv, c := start(t, WithManualClock())
	c.PushN("q", "", "m", 1)
	res := c.MustPop("/api/v1/pop/queue/q", nil) // queue mode; never acked
	done := waitIdleAsync(srv, t.Context(), "q", "")
	srv.Advance(61 * time.Second) // the lease expires; the message is back, still to do
	stillWaiting(t, srv, done, "q", "")
	again := c.MustPop("/api/v1/pop/queue/q", nil)
	if again.Messages[0].TransactionID != res.Messages[0].TransactionID {
		t.Fatalf("redelivered %s", again.Messages[0].TransactionID)
	}
	c.AckAll(again, "", "completed")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A dead letter ends a message for its group: WaitIdle returns, and DeadLetters counts it.
func TestWaitIdleAndDeadLetters(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.Post("/api/v1/configure", `{"queue":"q","options":{"retryLimit":0}}`).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", `{"queue":"other","options":{"retryLimit":0}}`).Want(t, http.StatusOK, nil)
	c.PushN("q", "", "m", 2)
	c.PushN("other", "", "o", 1)
	for _, g := range []string{"a", "b"} {
		res := c.MustPop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", g, "subscriptionMode", "all", "batch", "2"))
		c.AckAll(res, g, "failed")
		if err := srv.WaitIdle(t.Context(), "q", g); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.DeadLetters("q"); n != 4 {
		t.Fatalf("DeadLetters(q) = %d, want 4 (2 messages × 2 groups)", n)
	}
	if n := srv.DeadLetters("other"); n != 0 {
		t.Fatalf("DeadLetters(other) = %d, want 0", n)
	}
}

func TestWaitIdleHonoursCtxAndClose(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.PushN("q", "", "m", 3)
	ctx, cancel := context.WithCancel(t.Context())
	done := waitIdleAsync(srv, ctx, "q", "g")
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "3 messages left") {
		t.Fatalf("WaitIdle = %v, want context.Canceled with what was left", err)
	}
	done = waitIdleAsync(srv, t.Context(), "q", "g")
	stillWaiting(t, srv, done, "q", "g")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("WaitIdle = %v after Close", err)
	}
}

func TestWaitIdleOnNothing(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	if err := srv.WaitIdle(t.Context(), "no-such-queue", "g"); err != nil {
		t.Fatal(err)
	}
	if srv.Lag("no-such-queue", "g") != 0 || srv.DeadLetters("no-such-queue") != 0 {
		t.Fatal("an unknown queue has lag or dead letters")
	}
}

// Lag counts each partition from the group's cursor, and every message for a group that has
// not popped; a group starting at "new" counts only what came after it.
func TestLag(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	c.PushN("q", "p0", "a", 3)
	c.PushN("q", "p1", "b", 4)
	if lag := srv.Lag("q", "g"); lag != 7 {
		t.Fatalf("Lag of a group that never popped = %d, want 7", lag)
	}
	res := c.MustPop("/api/v1/pop/queue/q/partition/p0", testutil.Query("consumerGroup", "g", "subscriptionMode", "all", "batch", "2"))
	c.AckAll(res, "g", "completed")
	if lag := srv.Lag("q", "g"); lag != 5 {
		t.Fatalf("Lag = %d, want 5", lag)
	}
	if lag := srv.Lag("q", ""); lag != 7 {
		t.Fatalf("Lag of queue mode = %d, want 7", lag)
	}
	if c.Pop("/api/v1/pop/queue/q", testutil.Query("consumerGroup", "late", "subscriptionMode", "new", "wait", "false")) != nil {
		t.Fatal("a new group got old messages")
	}
	c.PushN("q", "p1", "c", 1)
	if lag := srv.Lag("q", "late"); lag != 1 {
		t.Fatalf("Lag of a group started at new = %d, want 1", lag)
	}
}
