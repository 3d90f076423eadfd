package wire

// PushRequest is the body of a push.
type PushRequest struct {
	Items []PushItem `json:"items"`
}

// PushItem is one message to store. An absent payload is stored as {}; an empty
// transactionId gets one made by the broker.
type PushItem struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitzero"` // empty means Default
	Payload       Value  `json:"payload,omitzero"`
	TransactionID string `json:"transactionId,omitzero"`
	TraceID       string `json:"traceId,omitzero"`
}

// PushResult is one element of a push answer, in the 0.15 snake_case keys. A 0.15 broker
// leaves out partition_id and trace_id on a duplicate, and offset always.
type PushResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transaction_id"`
	Status        string  `json:"status"` // queued, duplicate; on 0.15 also buffered or failed
	MessageID     string  `json:"message_id"`
	PartitionID   *string `json:"partition_id,omitzero"`
	TraceID       *string `json:"trace_id"`
	QueueName     string  `json:"queueName"`
	Offset        *int64  `json:"offset,omitzero"`
	Error         string  `json:"error,omitzero"` // why a 0.15 item failed
}
