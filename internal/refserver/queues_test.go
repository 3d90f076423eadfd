package refserver

import (
	"net/http"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// Deleting a queue or a group forgets its state.
func TestDeletingAQueueAndAGroup(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Push(testutil.Item{Queue: "gone"})
	res := c.MustPop("/api/v1/pop/queue/gone", testutil.Query("consumerGroup", "g", "subscriptionMode", "all"))
	var del map[string]any
	c.Delete("/api/v1/consumer-groups/g").Want(t, http.StatusOK, &del)
	if del["deletedPartitions"] != float64(1) {
		t.Errorf("deleted %v cursors, want 1", del["deletedPartitions"])
	}
	if c.Pop("/api/v1/pop/queue/gone", testutil.Query("consumerGroup", "g", "subscriptionMode", "all")) == nil {
		t.Fatal("the deleted group kept its lease")
	}
	_ = res
	c.Delete("/api/v1/resources/queues/gone").Want(t, http.StatusOK, nil)
	if c.Pop("/api/v1/pop/queue/gone", nil) != nil {
		t.Fatal("a deleted queue still delivers")
	}
	c.Delete("/api/v1/consumer-groups/nobody").WantError(t, http.StatusNotFound, "consumer group not found")
}
