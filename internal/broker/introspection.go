package broker

import "time"

// What the read routes answer, as the engine sees it: the HTTP layer writes each generation's
// body from these. A zero time is a time that does not exist (no lease, nothing consumed yet).

// Counts are a partition's, a queue's or the broker's message counts.
type Counts struct {
	Total, Pending, Processing, Completed, Failed, DeadLetter int64
}

// QueueList is one page of the queue list, newest queue first.
type QueueList struct {
	Queues []QueueSummary
	Total  int64 // the queues that match the filter, on every page
}

// QueueSummary is one queue of the list.
type QueueSummary struct {
	ID, Name, Namespace, Task string
	CreatedAt                 time.Time
	Partitions                int64
	Messages                  Counts
}

// QueueDetail is one queue with its partitions, in byte order of their names.
type QueueDetail struct {
	Queue      QueueInfo
	Partitions []PartitionDetail
	Totals     Counts
}

// QueueInfo is a queue's labels and configuration.
type QueueInfo struct {
	ID, Name, Namespace, Task string
	Priority                  int64
	CreatedAt                 time.Time
	LeaseTime, RetryLimit     int64
	DeadLetterQueue           bool
	RetryDelay, TTL, MaxSize  *int64            // nil unless configured as an integer
	Options                   map[string][]byte // the stored options as configure echoes them
}

// PartitionDetail is one partition of a queue detail.
type PartitionDetail struct {
	ID, Name                                   string
	CreatedAt                                  time.Time
	LastOffset                                 int64
	Messages                                   Counts
	TotalConsumed, BatchesConsumed             int64
	LastActivity, OldestMessage, NewestMessage time.Time
}

// GroupSummary is one group on one queue.
type GroupSummary struct {
	Name, Queue                                      string
	Members, PartitionsWithLag, TotalLag, MaxTimeLag int64
	State                                            string // Stable, Lagging or Dead
	Conflation                                       bool
	Subscription                                     *Subscription // nil for queue mode, or no stored start
}

// Subscription is a group's stored start on a queue.
type Subscription struct {
	Mode      string    // "all", "new" or "timestamp"
	Timestamp time.Time // new: when it was decided; timestamp: the time; all: zero
	CreatedAt time.Time // when it was decided
}

// GroupDetail is a group's partitions, by queue name.
type GroupDetail map[string][]GroupPartition

// GroupPartition is a group's position and lag in one partition.
type GroupPartition struct {
	Partition, PartitionID                                 string
	Cursor, OffsetLag, Pending, Processing, TimeLagSeconds int64
	LeaseActive                                            bool
	WorkerID                                               string // the lease's id, "" for none
	LeaseExpiresAt, LastConsumedAt                         time.Time
	TotalConsumed, Retries                                 int64
}

// LaggingEntry is one (group, partition) whose time lag is above the asked minimum.
type LaggingEntry struct {
	Group, Queue, Partition, PartitionID string
	OffsetLag, TimeLagSeconds            int64
	LagHours                             float64
	OldestUnconsumedAt, LastConsumedAt   time.Time
	WorkerID                             string // the lease's id, "" for none
}

// MessageList is one page of a browse.
type MessageList struct {
	Messages []MessageEntry
	Mode     GroupKinds
}

// GroupKinds says which kinds of group read a queue: Type is queue, bus, hybrid or none.
type GroupKinds struct {
	HasQueueMode   bool
	BusGroupsCount int64
	Type           string
}

// MessageEntry is one browsed message.
type MessageEntry struct {
	ID, TransactionID, PartitionID, Partition string
	Queue, QueuePath, Namespace, Task         string
	QueuePriority, Offset                     int64
	TraceID                                   string // "" for none
	CreatedAt                                 time.Time
	Status, QueueStatus                       string
	ConsumedBy, TotalGroups                   int64 // the named groups past the message, and all of them
	LeaseExpiresAt                            time.Time
	Payload                                   []byte // nil unless asked for
}

// MessageDetail is one message with every group's view of it.
type MessageDetail struct {
	MessageEntry
	ErrorMessage *string // the latest dead letter's, nil when none
	RetryCount   *int64
	Config       MessageQueueConfig
	Mode         GroupKinds
	Groups       []MessageGroup
}

// MessageQueueConfig is the configuration of a message's queue.
type MessageQueueConfig struct {
	LeaseTime, RetryLimit int64
	RetryDelay, TTL       *int64
	Priority              int64
}

// MessageGroup is one group's view of a message.
type MessageGroup struct {
	Name            string
	Consumed        bool
	LeaseExpiresAt  time.Time
	Status          string
	DeliveryAttempt int64
}

// Overview is the broker-wide overview.
type Overview struct {
	Queues, Partitions, Namespaces, Tasks int64
	Messages                              Counts
	OffsetLag, TimeLag                    LagStats
	IngestedPerSecond, ProcessedPerSecond float64
	Timestamp                             time.Time
}

// LagStats are the partitions' lags: min, max, the average rounded down and the lower median.
type LagStats struct{ Min, Max, Avg, Median float64 }
