package wire

// The answers of the read-only introspection routes: health, queue status, consumer groups,
// the lagging list, message browsing and the overview. The reference broker writes them with
// every key present (an absent value is null); a 0.15 broker leaves out the keys marked "2.0"
// below, which then decode as nil, and sends its keys in another order, which does not matter.

// Health is GET /health.
type Health struct {
	Database string `json:"database"`
	Server   string `json:"server"`
	Status   string `json:"status"`
	Version  string `json:"version"`
}

// Pagination echoes a list's limit and offset.
type Pagination struct {
	Limit  int64 `json:"limit"`
	Offset int64 `json:"offset"`
}

// QueueList is the queue list.
type QueueList struct {
	Queues     []QueueSummary `json:"queues"`
	Pagination Pagination     `json:"pagination"`
	Total      *int64         `json:"total"` // 2.0
}

// QueueSummary is one entry of the queue list.
type QueueSummary struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Namespace  string        `json:"namespace"`
	Task       string        `json:"task"`
	CreatedAt  Time          `json:"createdAt"`
	Partitions int64         `json:"partitions"`
	Messages   SummaryCounts `json:"messages"`
}

// SummaryCounts are a queue summary's message counts.
type SummaryCounts struct {
	Total      int64  `json:"total"`
	Pending    int64  `json:"pending"`
	Processing int64  `json:"processing"`
	Completed  *int64 `json:"completed"`  // 2.0
	DeadLetter *int64 `json:"deadLetter"` // 2.0
}

// Counts are a partition's, a queue's or the broker's message counts.
type Counts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	DeadLetter int64 `json:"deadLetter"`
}

// QueueDetail is one queue's detail.
type QueueDetail struct {
	Queue      QueueDetailQueue  `json:"queue"`
	Partitions []PartitionDetail `json:"partitions"`
	Totals     QueueTotals       `json:"totals"`
}

// QueueDetailQueue is the queue part of a queue detail.
type QueueDetailQueue struct {
	ID        string           `json:"id"`
	Name      string           `json:"name"`
	Namespace string           `json:"namespace"`
	Task      string           `json:"task"`
	Priority  int64            `json:"priority"`
	CreatedAt Time             `json:"createdAt"`
	Config    QueueConfig      `json:"config"`
	Options   map[string]Value `json:"options"` // 2.0: the stored options as configure echoes them
}

// QueueConfig is a queue detail's config.
type QueueConfig struct {
	LeaseTime       int64  `json:"leaseTime"`
	RetryLimit      int64  `json:"retryLimit"`
	DeadLetterQueue bool   `json:"deadLetterQueue"`
	RetryDelay      *int64 `json:"retryDelay"`
	TTL             *int64 `json:"ttl"`
	MaxQueueSize    *int64 `json:"maxQueueSize"`
}

// PartitionDetail is one partition of a queue detail.
type PartitionDetail struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	CreatedAt     Time            `json:"createdAt"`
	LastOffset    *int64          `json:"lastOffset"` // 2.0
	Messages      Counts          `json:"messages"`
	Stats         Counts          `json:"stats"`
	Cursor        PartitionCursor `json:"cursor"`
	LastActivity  *Time           `json:"lastActivity"`
	OldestMessage *Time           `json:"oldestMessage"`
	NewestMessage *Time           `json:"newestMessage"`
}

// PartitionCursor sums the groups' consumption of a partition.
type PartitionCursor struct {
	TotalConsumed   int64 `json:"totalConsumed"`
	BatchesConsumed int64 `json:"batchesConsumed"`
}

// QueueTotals holds a queue's counts both nested and flat, as 0.15 does.
type QueueTotals struct {
	Messages Counts `json:"messages"`
	Counts   `json:",inline"`
}

// GroupSummary is one entry of the group list: a group on one queue.
type GroupSummary struct {
	Name                  string   `json:"name"`
	QueueName             string   `json:"queueName"`
	Topics                []string `json:"topics"`
	Members               int64    `json:"members"`
	PartitionsWithLag     int64    `json:"partitionsWithLag"`
	TotalLag              *int64   `json:"totalLag"` // null on 0.15
	MaxTimeLag            int64    `json:"maxTimeLag"`
	State                 string   `json:"state"`
	Conflation            *bool    `json:"conflation"` // 2.0
	SubscriptionMode      *string  `json:"subscriptionMode"`
	SubscriptionTimestamp *Time    `json:"subscriptionTimestamp"`
	SubscriptionCreatedAt *Time    `json:"subscriptionCreatedAt"`
}

// GroupDetail is a group's detail: one member per queue, by queue name.
type GroupDetail map[string]GroupDetailQueue

// GroupDetailQueue is a group's partitions on one queue.
type GroupDetailQueue struct {
	Partitions []GroupPartition `json:"partitions"`
}

// GroupPartition is a group's position and lag in one partition.
type GroupPartition struct {
	Partition      string  `json:"partition"`
	PartitionID    *string `json:"partitionId"` // 2.0
	Cursor         *int64  `json:"cursor"`      // 2.0
	OffsetLag      int64   `json:"offsetLag"`
	Pending        *int64  `json:"pending"`    // 2.0
	Processing     *int64  `json:"processing"` // 2.0
	TimeLagSeconds int64   `json:"timeLagSeconds"`
	LeaseActive    bool    `json:"leaseActive"`
	WorkerID       *string `json:"workerId"`
	LeaseExpiresAt *Time   `json:"leaseExpiresAt"` // 2.0
	LastConsumedAt *Time   `json:"lastConsumedAt"`
	TotalConsumed  int64   `json:"totalConsumed"`
	Retries        *int64  `json:"retries"` // 2.0
}

// LaggingEntry is one entry of the lagging list, snake_case as in 0.15.
type LaggingEntry struct {
	ConsumerGroup      string  `json:"consumer_group"`
	QueueName          string  `json:"queue_name"`
	PartitionName      string  `json:"partition_name"`
	PartitionID        string  `json:"partition_id"`
	OffsetLag          int64   `json:"offset_lag"`
	TimeLagSeconds     int64   `json:"time_lag_seconds"`
	LagHours           float64 `json:"lag_hours"`
	OldestUnconsumedAt *Time   `json:"oldest_unconsumed_at"`
	LastConsumedAt     *Time   `json:"last_consumed_at"`
	WorkerID           *string `json:"worker_id"`
}

// MessageList is a browse of a queue's messages.
type MessageList struct {
	Messages []MessageEntry `json:"messages"`
	Mode     MessageMode    `json:"mode"`
}

// MessageMode says which kinds of group read a queue.
type MessageMode struct {
	HasQueueMode     bool   `json:"hasQueueMode"`
	BusGroupsCount   int64  `json:"busGroupsCount"`
	ConsumedByGroups *int64 `json:"consumedByGroups,omitzero"` // message detail only
	Type             string `json:"type"`                      // queue, bus, hybrid or none
}

// MessageEntry is one browsed message.
type MessageEntry struct {
	ID             string    `json:"id"`
	TransactionID  string    `json:"transactionId"`
	PartitionID    string    `json:"partitionId"`
	Partition      string    `json:"partition"`
	Queue          string    `json:"queue"`
	QueuePath      string    `json:"queuePath"`
	Namespace      string    `json:"namespace"`
	Task           string    `json:"task"`
	QueuePriority  int64     `json:"queuePriority"`
	Offset         *int64    `json:"offset"` // 2.0
	TraceID        *string   `json:"traceId"`
	ProducerSub    *string   `json:"producerSub"`
	CreatedAt      Time      `json:"createdAt"`
	Status         string    `json:"status"`
	QueueStatus    string    `json:"queueStatus"`
	BusStatus      BusStatus `json:"busStatus"`
	LeaseExpiresAt *Time     `json:"leaseExpiresAt"`
	Payload        Value     `json:"payload,omitzero"` // 2.0, only when asked for; always in a detail
}

// BusStatus counts the named groups past a message.
type BusStatus struct {
	ConsumedBy  int64 `json:"consumedBy"`
	TotalGroups int64 `json:"totalGroups"`
}

// MessageDetail is one message's detail, found by partition id and transaction id.
type MessageDetail struct {
	MessageEntry   `json:",inline"`
	IsEncrypted    bool             `json:"isEncrypted"`
	ErrorMessage   *string          `json:"errorMessage"`
	RetryCount     *int64           `json:"retryCount"`
	QueueConfig    MessageQueueConf `json:"queueConfig"`
	Mode           MessageMode      `json:"mode"`
	ConsumerGroups []MessageGroup   `json:"consumerGroups"`
}

// MessageQueueConf is a message detail's queueConfig.
type MessageQueueConf struct {
	LeaseTime  int64  `json:"leaseTime"`
	RetryLimit int64  `json:"retryLimit"`
	RetryDelay *int64 `json:"retryDelay"`
	TTL        *int64 `json:"ttl"`
	Priority   int64  `json:"priority"`
}

// MessageGroup is one group's view of a message.
type MessageGroup struct {
	Name            string  `json:"name"`
	Consumed        bool    `json:"consumed"`
	LeaseExpiresAt  *Time   `json:"leaseExpiresAt"`
	Status          *string `json:"status"`          // 2.0
	DeliveryAttempt *int64  `json:"deliveryAttempt"` // 2.0
}

// Overview is the broker-wide overview.
type Overview struct {
	Queues     int64      `json:"queues"`
	Partitions int64      `json:"partitions"`
	Namespaces int64      `json:"namespaces"`
	Tasks      int64      `json:"tasks"`
	Messages   Counts     `json:"messages"`
	Lag        Lag        `json:"lag"`
	Throughput Throughput `json:"throughput"`
	Timestamp  Time       `json:"timestamp"`
	StatsAge   int64      `json:"statsAge"`
}

// Lag summarises the partitions' lag in messages and in seconds.
type Lag struct {
	Offset LagStats `json:"offset"`
	Time   LagStats `json:"time"`
}

// LagStats are whole numbers from the reference broker; float64 also reads a 0.15 fraction.
type LagStats struct {
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Avg    float64 `json:"avg"`
	Median float64 `json:"median"`
}

// Throughput is messages per second over the last five minutes.
type Throughput struct {
	IngestedPerSecond  float64 `json:"ingestedPerSecond"`
	ProcessedPerSecond float64 `json:"processedPerSecond"`
}
