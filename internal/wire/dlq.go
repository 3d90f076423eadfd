package wire

// DLQAnswer is the dead-letter list. A 0.15 broker sends no total.
type DLQAnswer struct {
	Messages   []DeadLetter `json:"messages"`
	Pagination *Pagination  `json:"pagination,omitzero"`
	Total      *int         `json:"total,omitzero"`
}

// DeadLetter is one entry of the dead-letter list. A 0.15 broker has no dead-letter ids: its
// ID is the message id, and MessageID is absent.
type DeadLetter struct {
	ID            string  `json:"id"`
	MessageID     string  `json:"messageId,omitzero"`
	TransactionID string  `json:"transactionId"`
	PartitionID   string  `json:"partitionId"`
	Queue         string  `json:"queue"`
	Partition     string  `json:"partition"`
	ConsumerGroup string  `json:"consumerGroup"`
	ErrorMessage  string  `json:"errorMessage"`
	RetryCount    int     `json:"retryCount"`
	Data          Value   `json:"data"`
	ProducerSub   *string `json:"producerSub"`
	CreatedAt     Time    `json:"createdAt"` // when the message was pushed
	FailedAt      Time    `json:"failedAt"`  // when it was filed
}

// ReplayAnswer is the answer of a dead letter's replay: where the copy, pushed under
// the transaction id dlq:<id>, was stored.
type ReplayAnswer struct {
	Replayed      bool   `json:"replayed"`
	ID            string `json:"id"`
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	Offset        *int64 `json:"offset,omitzero"`
}

// DeleteDeadLetterAnswer is the answer of a dead letter's deletion.
type DeleteDeadLetterAnswer struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}
