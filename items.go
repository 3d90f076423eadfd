package queen

// The values the ack and push calls take and return, one per item.

// Status is an ack status.
type Status string

// The ack statuses, as the broker applies them.
const (
	StatusCompleted Status = "completed" // done: the group's cursor moves to the message
	StatusFailed    Status = "failed"    // spends one retry, then redelivered; dead-lettered once the budget is spent
	StatusRetry     Status = "retry"     // redelivered at once without spending a retry
	StatusDLQ       Status = "dlq"       // filed as a dead letter at once, whatever the budget
)

// AckItem is one entry of a batch ack.
type AckItem struct {
	Message *Message
	Status  Status
	Error   string // stored with failed and dlq
}

// AckResult is the broker's answer for one ack item.
type AckResult struct {
	TransactionID string
	Success       bool
	Error         string
	DLQ           bool // the item filed a dead letter
	LeaseReleased bool // the item ended the lease of its (partition, group)
}

// PushItem is one message to push. Data is JSON-encoded; json.RawMessage passes through unchanged.
// An empty TransactionID gets a client-made UUIDv7, so a retried push is deduplicated by the broker.
// Partition is this item's own partition, so one push can carry items of many partitions; empty,
// the item goes to the partition the call names (the builder's Partition, or Default).
type PushItem struct {
	Data          any
	TransactionID string
	TraceID       string // empty, or a UUID in canonical form
	Partition     string // empty: the call's partition
}

// PushResult is the broker's answer for one pushed item.
type PushResult struct {
	TransactionID string
	MessageID     string
	PartitionID   string // empty on a 0.15 duplicate
	Status        string // "queued", "duplicate", or on 0.15 also "buffered" / "failed"
	Offset        int64  // -1 when the broker does not send it (0.15)
}
