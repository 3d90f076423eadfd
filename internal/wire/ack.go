package wire

// AckRequest is the body of a single ack, and one item of a batch ack.
type AckRequest struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId,omitzero"`
	Status        string `json:"status,omitzero"` // empty means completed
	ConsumerGroup string `json:"consumerGroup,omitzero"`
	Error         string `json:"error,omitzero"`
}

// AckBatchRequest is the body of a batch ack. A group named here applies to
// every item.
type AckBatchRequest struct {
	Acknowledgments []AckRequest `json:"acknowledgments"`
	ConsumerGroup   string       `json:"consumerGroup,omitzero"`
}

// AckResult is one element of an ack answer (an array, for both routes). QueueName and
// PartitionName are null when the partition is unknown.
type AckResult struct {
	Index         int    `json:"index"`
	TransactionID string `json:"transactionId"`
	AckOutcome
	QueueName     *string `json:"queueName"`
	PartitionName *string `json:"partitionName"`
}

// AckOutcome is what an ack result says of its item, all a client reads of it. Error is null
// on success, and on a 0.15 refusal of an unknown status.
type AckOutcome struct {
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	LeaseReleased bool    `json:"leaseReleased"`
	DLQ           bool    `json:"dlq"`
}
