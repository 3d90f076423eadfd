package wire

// The introspection answers of a 0.15 broker, as the reference broker writes them in its 0.15
// mode: no 2.0-only members, timestamps with milliseconds, and, as 0.15 sends them, members in
// alphabetical order.

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
	CreatedAt     Time015         `json:"createdAt"`
	Cursor        PartitionCursor `json:"cursor"`
	ID            string          `json:"id"`
	LastActivity  *Time015        `json:"lastActivity"`
	Messages      Counts015       `json:"messages"`
	Name          string          `json:"name"`
	NewestMessage *Time015        `json:"newestMessage"`
	OldestMessage *Time015        `json:"oldestMessage"`
	Stats         Counts015       `json:"stats"`
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

// QueueTotals015 are a queue detail's totals, flat and again under messages.
type QueueTotals015 struct {
	Counts015 `json:",inline"`
	Messages  Counts015 `json:"messages"`
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
