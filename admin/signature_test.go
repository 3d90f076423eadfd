package admin_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// Every exported call and type of admin keeps the signature and fields callers compile against.
func TestAdminSignatures(t *testing.T) {
	t.Parallel()
	c, err := queen.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var _ func(*queen.Client) *admin.Admin = admin.New
	a := admin.New(c)
	var (
		_ func(context.Context, string, string, admin.SeekTarget) error            = a.SeekConsumerGroup
		_ func(time.Time) admin.SeekTarget                                         = admin.SeekToTime
		_ func() admin.SeekTarget                                                  = admin.SeekToEnd
		_ func(context.Context, admin.DLQQuery) (admin.DLQPage, error)             = a.DeadLetters
		_ func(context.Context, string) (admin.Replayed, error)                    = a.ReplayDeadLetter
		_ func(context.Context, string) error                                      = a.DeleteDeadLetter
		_ func(context.Context, string, admin.QueueOptions) error                  = a.ConfigureQueue
		_ func(context.Context, string, func(*admin.QueueOptions)) error           = a.UpdateQueue
		_ func(context.Context, string) error                                      = a.DeleteQueue
		_ func(context.Context, string) error                                      = a.DeleteConsumerGroup
		_ func(context.Context) ([]admin.QueueInfo, error)                         = a.Queues
		_ func(context.Context, string) (admin.QueueInfo, error)                   = a.QueueInfo
		_ func(context.Context) ([]admin.GroupInfo, error)                         = a.ConsumerGroups
		_ func(context.Context, string) (admin.GroupInfo, error)                   = a.ConsumerGroup
		_ func(context.Context, admin.MessageQuery) ([]admin.StoredMessage, error) = a.Messages
	)
	_ = admin.DLQQuery{Queue: "q", ConsumerGroup: "g", Limit: 1, Offset: 0}
	_ = admin.QueueOptions{LeaseTime: time.Second, RetryLimit: new(0), DeadLetterQueue: new(false), Namespace: "n", Task: "t"}
	page := admin.DLQPage{DeadLetters: []admin.DeadLetter{{ID: "i", MessageID: "m", TransactionID: "t", Queue: "q",
		Partition: "p", PartitionID: "pid", ConsumerGroup: "g", Error: "e", RetryCount: 1, Data: nil,
		CreatedAt: time.Time{}, FailedAt: time.Time{}}}, Total: -1, Limit: 1, Offset: 0}
	r := admin.Replayed{ID: "i", TransactionID: "dlq:i", PartitionID: "p", Offset: 1, Emulated: true}
	_ = admin.MessageQuery{Queue: "", Partition: "", Limit: 0, Offset: 0}
	q := admin.QueueInfo{Name: "", Namespace: "", Task: "", Partitions: []admin.PartitionInfo{}, Messages: 0, Pending: 0, DeadLetters: 0, Config: admin.QueueConfig{}}
	_ = admin.PartitionInfo{Name: "", ID: "", Messages: int64(0), Newest: time.Time{}}
	_ = admin.GroupInfo{Name: "", Queues: []admin.GroupQueue{{Queue: "", Lag: int64(0), TimeLag: time.Duration(0), Partitions: []admin.PartitionLag{}}}}
	_ = admin.PartitionLag{Partition: "", PartitionID: "", Cursor: int64(0), Lag: int64(0), TimeLag: time.Duration(0), Leased: false}
	_ = admin.StoredMessage{ID: "", TransactionID: "", TraceID: "", Partition: "", PartitionID: "", Offset: int64(0), CreatedAt: time.Time{}, Data: json.RawMessage(nil)}
	var _ int64 = q.Messages + q.Pending + q.DeadLetters
	assert.Equal(t, -1, page.Total)
	assert.True(t, r.Emulated)
}
