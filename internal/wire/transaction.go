package wire

// TransactionRequest is the body of a transaction.
type TransactionRequest struct {
	Operations []Operation `json:"operations"`
}

// Operation is one operation of a transaction: Type "ack" with the ack's fields, or "push"
// with Items.
type Operation struct {
	Type        string     `json:"type"`
	*AckRequest            // the ack's members, beside type
	Items       []PushItem `json:"items,omitzero"`
}

// TransactionAnswer is a transaction's answer. A rollback has Success false, an Error of the
// form "operation <n>: <reason>" and no results.
type TransactionAnswer struct {
	TransactionID string             `json:"transactionId"`
	Success       bool               `json:"success"`
	Error         *string            `json:"error,omitzero"`
	Results       []TransactionEntry `json:"results"`
}

// TransactionEntry is one result of a committed transaction: one per ack operation (Ack set)
// and one per pushed item (Push set), in request order.
type TransactionEntry struct {
	Index         int    `json:"index"`
	Type          string `json:"type"` // "ack" or "push"
	Success       bool   `json:"success"`
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	*AckEntry
	*PushEntry
}

// AckEntry holds the members only an ack entry has.
type AckEntry struct {
	Error         *string `json:"error"`
	DLQ           bool    `json:"dlq"`
	LeaseReleased bool    `json:"leaseReleased"`
}

// PushEntry holds the members only a push entry has. A 0.15 broker sends no offset.
type PushEntry struct {
	Status    string `json:"status"` // queued or duplicate
	MessageID string `json:"messageId"`
	QueueName string `json:"queueName"`
	Offset    *int64 `json:"offset,omitzero"`
}
