package admin_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// The introspection calls and types exactly as API.md states them.
func TestIntrospectionSignatures(t *testing.T) {
	t.Parallel()
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := admin.New(c)
	var (
		_ func(context.Context) ([]admin.QueueInfo, error)                         = a.Queues
		_ func(context.Context, string) (admin.QueueInfo, error)                   = a.QueueInfo
		_ func(context.Context) ([]admin.GroupInfo, error)                         = a.ConsumerGroups
		_ func(context.Context, string) (admin.GroupInfo, error)                   = a.ConsumerGroup
		_ func(context.Context, admin.MessageQuery) ([]admin.StoredMessage, error) = a.Messages
		_                                                                          = admin.MessageQuery{Queue: "", Partition: "", Limit: 0, Offset: 0}
	)
	q := admin.QueueInfo{Name: "", Namespace: "", Task: "", Partitions: []admin.PartitionInfo{}, Messages: 0, Pending: 0, DeadLetters: 0, Config: admin.QueueConfig{}}
	_ = admin.PartitionInfo{Name: "", ID: "", Messages: int64(0), Newest: time.Time{}}
	_ = admin.GroupInfo{Name: "", Queues: []admin.GroupQueue{{Queue: "", Lag: int64(0), TimeLag: time.Duration(0), Partitions: []admin.PartitionLag{}}}}
	_ = admin.PartitionLag{Partition: "", PartitionID: "", Cursor: int64(0), Lag: int64(0), TimeLag: time.Duration(0), Leased: false}
	_ = admin.StoredMessage{ID: "", TransactionID: "", TraceID: "", Partition: "", PartitionID: "", Offset: int64(0), CreatedAt: time.Time{}, Data: json.RawMessage(nil)}
	var _ int64 = q.Messages + q.Pending + q.DeadLetters
}
