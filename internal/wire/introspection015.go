package wire

// The introspection answers of a 0.15 broker, as the reference broker writes them in its 0.15
// mode: no 2.0-only members, timestamps with milliseconds, and, as 0.15 sends them, members in
// alphabetical order.

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// QueueList015 is 0.15's queue list: no total.
type QueueList015 struct {
	Pagination Pagination        `json:"pagination"`
	Queues     []QueueSummary015 `json:"queues"`
}

// QueueSummary015 is one queue of QueueList015.
type QueueSummary015 struct {
	CreatedAt  Time015          `json:"createdAt"`
	ID         string           `json:"id"`
	Messages   SummaryCounts015 `json:"messages"`
	Name       string           `json:"name"`
	Namespace  string           `json:"namespace"`
	Partitions int64            `json:"partitions"`
	Task       string           `json:"task"`
}

// SummaryCounts015 are a listed queue's counts.
type SummaryCounts015 struct {
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Total      int64 `json:"total"`
}

// Counts015 are a partition's or a queue's counts.
type Counts015 struct {
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
	Failed     int64 `json:"failed"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Total      int64 `json:"total"`
}

// QueueDetail015 is 0.15's queue detail.
type QueueDetail015 struct {
	Partitions []PartitionDetail015 `json:"partitions"`
	Queue      QueueDetailQueue015  `json:"queue"`
	Totals     QueueTotals015       `json:"totals"`
}

// PartitionDetail015 is one partition of QueueDetail015: no lastOffset.
type PartitionDetail015 struct {
	CreatedAt     Time015            `json:"createdAt"`
	Cursor        PartitionCursor015 `json:"cursor"`
	ID            string             `json:"id"`
	LastActivity  *Time015           `json:"lastActivity"`
	Messages      Counts015          `json:"messages"`
	Name          string             `json:"name"`
	NewestMessage *Time015           `json:"newestMessage"`
	OldestMessage *Time015           `json:"oldestMessage"`
	Stats         Counts015          `json:"stats"`
}

// PartitionCursor015 is PartitionCursor in 0.15's order.
type PartitionCursor015 struct {
	BatchesConsumed int64 `json:"batchesConsumed"`
	TotalConsumed   int64 `json:"totalConsumed"`
}

// QueueDetailQueue015 is QueueDetail015's queue: no options.
type QueueDetailQueue015 struct {
	Config    QueueConfig015 `json:"config"`
	CreatedAt Time015        `json:"createdAt"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Priority  int64          `json:"priority"`
	Task      string         `json:"task"`
}

// QueueConfig015 is a queue detail's config.
type QueueConfig015 struct {
	DeadLetterQueue bool   `json:"deadLetterQueue"`
	LeaseTime       int64  `json:"leaseTime"`
	MaxQueueSize    *int64 `json:"maxQueueSize"`
	RetryDelay      *int64 `json:"retryDelay"`
	RetryLimit      int64  `json:"retryLimit"`
	TTL             *int64 `json:"ttl"`
}

// QueueTotals015 are a queue detail's totals, flat and again under messages, in 0.15's order.
type QueueTotals015 struct {
	Completed  int64     `json:"completed"`
	DeadLetter int64     `json:"deadLetter"`
	Failed     int64     `json:"failed"`
	Messages   Counts015 `json:"messages"`
	Pending    int64     `json:"pending"`
	Processing int64     `json:"processing"`
	Total      int64     `json:"total"`
}

// QueueTotals015Of is c flat and again under messages.
func QueueTotals015Of(c Counts015) QueueTotals015 {
	return QueueTotals015{Completed: c.Completed, DeadLetter: c.DeadLetter, Failed: c.Failed, Messages: c,
		Pending: c.Pending, Processing: c.Processing, Total: c.Total}
}

// ResourceQueues015 is 0.15's bare queue list (/resources/queues): no pagination.
type ResourceQueues015 struct {
	Queues []QueueSummary015 `json:"queues"`
}

// ResourceQueue015 is 0.15's bare queue description (/resources/queues/{queue}): its
// partitions with their counts, no config and no cursors.
type ResourceQueue015 struct {
	CreatedAt  Time015                `json:"createdAt"`
	ID         string                 `json:"id"`
	Name       string                 `json:"name"`
	Namespace  string                 `json:"namespace"`
	Partitions []ResourcePartition015 `json:"partitions"`
	Task       string                 `json:"task"`
	Totals     Counts015              `json:"totals"`
}

// ResourcePartition015 is one partition of ResourceQueue015.
type ResourcePartition015 struct {
	CreatedAt     Time015   `json:"createdAt"`
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	NewestMessage *Time015  `json:"newestMessage"`
	OldestMessage *Time015  `json:"oldestMessage"`
	Stats         Counts015 `json:"stats"`
}

// Namespaces015 is 0.15's namespace list.
type Namespaces015 struct {
	Namespaces []Namespace015 `json:"namespaces"`
}

// Namespace015 is one namespace with its queues' sizes.
type Namespace015 struct {
	Messages   PendingTotal015 `json:"messages"`
	Namespace  string          `json:"namespace"`
	Partitions int64           `json:"partitions"`
	Queues     int64           `json:"queues"`
}

// Tasks015 is 0.15's task list.
type Tasks015 struct {
	Tasks []Task015 `json:"tasks"`
}

// Task015 is one task with its queues' sizes.
type Task015 struct {
	Messages   PendingTotal015 `json:"messages"`
	Partitions int64           `json:"partitions"`
	Queues     int64           `json:"queues"`
	Task       string          `json:"task"`
}

// PendingTotal015 are the counts of a namespace or a task.
type PendingTotal015 struct {
	Pending int64 `json:"pending"`
	Total   int64 `json:"total"`
}

// QueueMessage015 is one message of 0.15's bare message list of a queue
// (/status/queues/{queue}/messages).
type QueueMessage015 struct {
	CreatedAt     Time015 `json:"createdAt"`
	ID            string  `json:"id"`
	Partition     string  `json:"partition"`
	PartitionID   string  `json:"partitionId"`
	Queue         string  `json:"queue"`
	QueuePath     string  `json:"queuePath"`
	Status        string  `json:"status"`
	TransactionID string  `json:"transactionId"`
}

// NullValue015 is what 0.15 answers when its SQL function returned NULL.
type NullValue015 struct {
	Success bool     `json:"success"`
	Value   *Nothing `json:"value"`
}

// Nothing is a value always written as null.
type Nothing struct{}

// Dashboard015 is 0.15's status dashboard (/status).
type Dashboard015 struct {
	BucketMinutes   int64                `json:"bucketMinutes"`
	DeadLetterQueue DashboardDLQ015      `json:"deadLetterQueue"`
	Errors          DashboardErrors015   `json:"errors"`
	Leases          DashboardLeases015   `json:"leases"`
	Messages        DashboardMessages015 `json:"messages"`
	PointCount      int64                `json:"pointCount"`
	Queues          []Nothing            `json:"queues"`
	StatsAge        int64                `json:"statsAge"`
	Throughput      []DashboardPoint015  `json:"throughput"`
	TimeRange       DashboardRange015    `json:"timeRange"`
	Workers         []DashboardWorker015 `json:"workers"`
}

// DashboardDLQ015 is the dashboard's dead-letter summary.
type DashboardDLQ015 struct {
	AffectedPartitions int64     `json:"affectedPartitions"`
	TopErrors          []Nothing `json:"topErrors"`
	TotalMessages      int64     `json:"totalMessages"`
}

// DashboardErrors015 are the dashboard's error counters.
type DashboardErrors015 struct {
	AckFailed   int64 `json:"ackFailed"`
	DBErrors    int64 `json:"dbErrors"`
	DLQMessages int64 `json:"dlqMessages"`
}

// DashboardLeases015 is the dashboard's lease summary.
type DashboardLeases015 struct {
	Active               int64 `json:"active"`
	PartitionsWithLeases int64 `json:"partitionsWithLeases"`
	TotalAcked           int64 `json:"totalAcked"`
	TotalBatchSize       int64 `json:"totalBatchSize"`
}

// DashboardMessages015 are the dashboard's message counters.
type DashboardMessages015 struct {
	BatchEfficiency DashboardRequests015 `json:"batchEfficiency"`
	Completed       int64                `json:"completed"`
	DeadLetter      int64                `json:"deadLetter"`
	Failed          int64                `json:"failed"`
	Pending         int64                `json:"pending"`
	Processing      int64                `json:"processing"`
	Requests        DashboardRequests015 `json:"requests"`
	Total           int64                `json:"total"`
}

// DashboardRequests015 are per-route numbers of the dashboard.
type DashboardRequests015 struct {
	Ack  float64 `json:"ack"`
	Pop  float64 `json:"pop"`
	Push float64 `json:"push"`
}

// DashboardPoint015 is one bucket of the dashboard's throughput; the worker metrics 0.15
// keeps per bucket are null here.
type DashboardPoint015 struct {
	AckFailed          int64    `json:"ackFailed"`
	AvgEventLoopLagMs  *Nothing `json:"avgEventLoopLagMs"`
	AvgLagMs           int64    `json:"avgLagMs"`
	DBErrors           *Nothing `json:"dbErrors"`
	DBPoolActive       *Nothing `json:"dbPoolActive"`
	DBPoolIdle         *Nothing `json:"dbPoolIdle"`
	DBPoolSize         *Nothing `json:"dbPoolSize"`
	DLQCount           *Nothing `json:"dlqCount"`
	Ingested           int64    `json:"ingested"`
	IngestedPerSecond  Rate015  `json:"ingestedPerSecond"`
	MaxEventLoopLagMs  *Nothing `json:"maxEventLoopLagMs"`
	MaxLagMs           int64    `json:"maxLagMs"`
	MinFreeSlots       *Nothing `json:"minFreeSlots"`
	PopMessages        int64    `json:"popMessages"`
	PopPerSecond       Rate015  `json:"popPerSecond"`
	Processed          int64    `json:"processed"`
	ProcessedPerSecond Rate015  `json:"processedPerSecond"`
	QueenCPUSysPct     *Nothing `json:"queenCpuSysPct"`
	QueenCPUUserPct    *Nothing `json:"queenCpuUserPct"`
	QueenRSSMb         *Nothing `json:"queenRssMb"`
	Timestamp          string   `json:"timestamp"` // the bucket's minute, without a fraction
}

// DashboardRange015 is the dashboard's time window.
type DashboardRange015 struct {
	From Time015 `json:"from"`
	To   Time015 `json:"to"`
}

// DashboardWorker015 is one worker of the dashboard.
type DashboardWorker015 struct {
	AvgEventLoopLagMs int64  `json:"avgEventLoopLagMs"`
	DBConnections     int64  `json:"dbConnections"`
	FreeSlots         int64  `json:"freeSlots"`
	Hostname          string `json:"hostname"`
	JobQueueSize      int64  `json:"jobQueueSize"`
	MaxEventLoopLagMs int64  `json:"maxEventLoopLagMs"`
	MessagesProcessed int64  `json:"messagesProcessed"`
	WorkerID          int64  `json:"workerId"`
}

// GroupSummary015 is one entry of 0.15's group list: totalLag always null,
// no conflation.
type GroupSummary015 struct {
	MaxTimeLag            int64    `json:"maxTimeLag"`
	Members               int64    `json:"members"`
	Name                  string   `json:"name"`
	PartitionsWithLag     int64    `json:"partitionsWithLag"`
	QueueName             string   `json:"queueName"`
	State                 string   `json:"state"`
	SubscriptionCreatedAt *Time015 `json:"subscriptionCreatedAt"`
	SubscriptionMode      *string  `json:"subscriptionMode"`
	SubscriptionTimestamp *Time015 `json:"subscriptionTimestamp"`
	Topics                []string `json:"topics"`
	TotalLag              *int64   `json:"totalLag"`
}

// GroupDetail015 is 0.15's group detail, keyed by queue name.
type GroupDetail015 map[string]GroupDetailQueue015

// GroupDetailQueue015 is one queue of GroupDetail015.
type GroupDetailQueue015 struct {
	Partitions []GroupPartition015 `json:"partitions"`
}

// GroupPartition015 is a group on one partition where it has a cursor row.
type GroupPartition015 struct {
	LastConsumedAt *Time015 `json:"lastConsumedAt"`
	LeaseActive    bool     `json:"leaseActive"`
	OffsetLag      int64    `json:"offsetLag"`
	Partition      string   `json:"partition"`
	TimeLagSeconds int64    `json:"timeLagSeconds"`
	TotalConsumed  int64    `json:"totalConsumed"`
	WorkerID       *string  `json:"workerId"`
}

// LaggingEntry015 is one entry of 0.15's lagging list.
type LaggingEntry015 struct {
	ConsumerGroup      string   `json:"consumer_group"`
	LagHours           float64  `json:"lag_hours"`
	LastConsumedAt     *Time015 `json:"last_consumed_at"`
	OffsetLag          int64    `json:"offset_lag"`
	OldestUnconsumedAt *Time015 `json:"oldest_unconsumed_at"`
	PartitionID        string   `json:"partition_id"`
	PartitionName      string   `json:"partition_name"`
	QueueName          string   `json:"queue_name"`
	TimeLagSeconds     int64    `json:"time_lag_seconds"`
	WorkerID           *string  `json:"worker_id"`
}

// MessageList015 is 0.15's browse of a queue's messages.
type MessageList015 struct {
	Messages []MessageEntry015 `json:"messages"`
	Mode     MessageMode015    `json:"mode"`
}

// MessageMode015 is a browse's mode.
type MessageMode015 struct {
	BusGroupsCount int64  `json:"busGroupsCount"`
	HasQueueMode   bool   `json:"hasQueueMode"`
	Type           string `json:"type"`
}

// MessageEntry015 is one browsed message: no offset, no payload.
type MessageEntry015 struct {
	BusStatus      BusStatus015 `json:"busStatus"`
	CreatedAt      Time015      `json:"createdAt"`
	ID             string       `json:"id"`
	LeaseExpiresAt *Time015     `json:"leaseExpiresAt"`
	Namespace      string       `json:"namespace"`
	Partition      string       `json:"partition"`
	PartitionID    string       `json:"partitionId"`
	ProducerSub    *string      `json:"producerSub"`
	Queue          string       `json:"queue"`
	QueuePath      string       `json:"queuePath"`
	QueuePriority  int64        `json:"queuePriority"`
	QueueStatus    string       `json:"queueStatus"`
	Status         string       `json:"status"`
	Task           string       `json:"task"`
	TraceID        *string      `json:"traceId"`
	TransactionID  string       `json:"transactionId"`
}

// BusStatus015 is a browsed message's bus counts.
type BusStatus015 struct {
	ConsumedBy  int64 `json:"consumedBy"`
	TotalGroups int64 `json:"totalGroups"`
}

// MessageDetail015 is 0.15's message detail.
type MessageDetail015 struct {
	ConsumerGroups []MessageGroup015    `json:"consumerGroups"`
	CreatedAt      Time015              `json:"createdAt"`
	ErrorMessage   *string              `json:"errorMessage"`
	ID             string               `json:"id"`
	IsEncrypted    bool                 `json:"isEncrypted"`
	LeaseExpiresAt *Time015             `json:"leaseExpiresAt"`
	Mode           MessageDetailMode015 `json:"mode"`
	Namespace      string               `json:"namespace"`
	Partition      string               `json:"partition"`
	PartitionID    string               `json:"partitionId"`
	Payload        Value                `json:"payload"`
	ProducerSub    *string              `json:"producerSub"`
	Queue          string               `json:"queue"`
	QueueConfig    MessageQueueConf015  `json:"queueConfig"`
	QueuePath      string               `json:"queuePath"`
	RetryCount     *int64               `json:"retryCount"`
	Status         string               `json:"status"`
	Task           string               `json:"task"`
	TraceID        *string              `json:"traceId"`
	TransactionID  string               `json:"transactionId"`
}

// MessageDetailMode015 is a message detail's mode.
type MessageDetailMode015 struct {
	BusGroupsCount   int64  `json:"busGroupsCount"`
	ConsumedByGroups int64  `json:"consumedByGroups"`
	HasQueueMode     bool   `json:"hasQueueMode"`
	Type             string `json:"type"`
}

// MessageGroup015 is one group with a cursor row on the message's partition: no status, no
// deliveryAttempt.
type MessageGroup015 struct {
	Consumed       bool     `json:"consumed"`
	LeaseExpiresAt *Time015 `json:"leaseExpiresAt"`
	Name           string   `json:"name"`
}

// MessageQueueConf015 is a message detail's queueConfig.
type MessageQueueConf015 struct {
	LeaseTime  int64  `json:"leaseTime"`
	Priority   int64  `json:"priority"`
	RetryDelay *int64 `json:"retryDelay"`
	RetryLimit int64  `json:"retryLimit"`
	TTL        *int64 `json:"ttl"`
}

// Overview015 is 0.15's overview.
type Overview015 struct {
	Lag        Lag        `json:"lag"`
	Messages   Counts015  `json:"messages"`
	Namespaces int64      `json:"namespaces"`
	Partitions int64      `json:"partitions"`
	Queues     int64      `json:"queues"`
	StatsAge   int64      `json:"statsAge"`
	Tasks      int64      `json:"tasks"`
	Throughput Throughput `json:"throughput"`
	Timestamp  Time015    `json:"timestamp"`
}

// Rate015 is a per-second rate as 0.15 writes it: always with a fraction (0.0, 1.6).
type Rate015 float64

// MarshalJSONTo writes the rate with at least one decimal.
func (r Rate015) MarshalJSONTo(enc *jsontext.Encoder) error {
	s := strconv.FormatFloat(float64(r), 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return enc.WriteValue(jsontext.Value(s))
}
