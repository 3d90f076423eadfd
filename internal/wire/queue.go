package wire

// ConfigureRequest is the body of a configure.
type ConfigureRequest struct {
	Queue     string        `json:"queue"`
	Namespace string        `json:"namespace,omitzero"`
	Task      string        `json:"task,omitzero"`
	Options   *QueueOptions `json:"options,omitzero"`
}

// QueueOptions are a queue's options, as configured and as echoed back. A nil option was not
// sent and takes its default. Other options pass through in Other, so every option a broker
// echoes is kept.
type QueueOptions struct {
	LeaseTime         *int64           `json:"leaseTime,omitzero"`  // seconds
	RetryLimit        *int64           `json:"retryLimit,omitzero"` // failed deliveries before a dead letter
	DeadLetterQueue   *bool            `json:"deadLetterQueue,omitzero"`
	RetryDelay        *int64           `json:"retryDelay,omitzero"`        // milliseconds (0.15)
	DelayedProcessing *int64           `json:"delayedProcessing,omitzero"` // seconds (0.15)
	TTL               *int64           `json:"ttl,omitzero"`               // seconds (0.15)
	Other             map[string]Value `json:",embed"`
}

// ConfigureAnswer is a configure's answer: the queue, its Default partition and its
// effective options.
type ConfigureAnswer struct {
	Configured  bool         `json:"configured"`
	QueueID     string       `json:"queueId"`
	PartitionID string       `json:"partitionId"`
	Queue       string       `json:"queue"`
	Namespace   string       `json:"namespace"`
	Task        string       `json:"task"`
	Options     QueueOptions `json:"options"`
}

// DeleteQueueAnswer is the answer of a queue's deletion. A 0.15 broker
// also answers an unknown queue, with Existed false.
type DeleteQueueAnswer struct {
	Deleted bool   `json:"deleted"`
	Queue   string `json:"queue"`
	Existed *bool  `json:"existed,omitzero"`
}
