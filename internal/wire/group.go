package wire

// SeekRequest is the body of a seek of a group's cursors on a queue: a
// timestamp or toEnd, never both.
type SeekRequest struct {
	Timestamp string `json:"timestamp,omitzero"` // RFC 3339
	ToEnd     bool   `json:"toEnd,omitzero"`
}

// SeekAnswer is a seek's answer. TargetTimestamp is null for a seek to the end.
type SeekAnswer struct {
	Success           bool   `json:"success"`
	ConsumerGroup     string `json:"consumerGroup"`
	QueueName         string `json:"queueName"`
	SeekToEnd         bool   `json:"seekToEnd"`
	TargetTimestamp   *Time  `json:"targetTimestamp"`
	PartitionsUpdated int    `json:"partitionsUpdated"`
}

// DeleteGroupAnswer is the answer of a group's deletion on every queue, and, with QueueName,
// on one queue.
type DeleteGroupAnswer struct {
	Success           bool   `json:"success"`
	ConsumerGroup     string `json:"consumerGroup"`
	QueueName         string `json:"queueName,omitzero"`
	DeletedPartitions *int   `json:"deletedPartitions"` // nil when absent; 0 from 0.15 means the group was unknown
	MetadataDeleted   bool   `json:"metadataDeleted"`
}
