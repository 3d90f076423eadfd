package wire

// PopAnswer is the 200 body of the pop routes. It reads every shape a broker sends: the
// leased messages, the empty variants of a 0.15 broker ({"success":false,"error":
// "lease_held","messages":[]}, a long poll's {"success":true,"leaseId":null,...,
// "messages":[]}, {"messages":[],"paused":true}) and a 0.15 database failure
// ({"success":false,"error":...} without messages).
type PopAnswer struct {
	Success           *bool   `json:"success,omitzero"`
	Error             *string `json:"error,omitzero"`
	Queue             string  `json:"queue,omitzero"`
	Partition         string  `json:"partition,omitzero"`
	PartitionID       *string `json:"partitionId,omitzero"` // null after a 0.15 long poll found nothing
	LeaseID           *string `json:"leaseId,omitzero"`     // null after a 0.15 long poll found nothing
	ConsumerGroup     string  `json:"consumerGroup,omitzero"`
	PartitionsClaimed int     `json:"partitionsClaimed,omitzero"`
	// Messages is nil when the member is absent or null, and empty for [].
	Messages []Message `json:"messages"`
	Paused   bool      `json:"paused,omitzero"` // a 0.15 broker in maintenance
}

// Message is one leased message of a pop answer. Its queue, partition, lease and group may be
// left out (or empty) when the answer's top level carries them.
type Message struct {
	ID            string  `json:"id"`
	TransactionID string  `json:"transactionId"`
	TraceID       *string `json:"traceId"` // null when the push had none
	Data          Value   `json:"data"`
	ProducerSub   *string `json:"producerSub"` // always null from these brokers
	// CreatedAt is kept as sent: a time the reader cannot parse must not lose a leased batch.
	CreatedAt     string `json:"createdAt"`
	PartitionID   string `json:"partitionId,omitzero"`
	Partition     string `json:"partition,omitzero"`
	LeaseID       string `json:"leaseId"`
	ConsumerGroup string `json:"consumerGroup,omitzero"`
	Queue         string `json:"queue,omitzero"`
	// Offset and DeliveryAttempt are nil when the broker does not send them (0.15).
	Offset          *int64 `json:"offset,omitzero"`
	DeliveryAttempt *int   `json:"deliveryAttempt,omitzero"`
}

// EmptyPopErrors are the errors with which a 0.15 broker says "nothing to deliver".
var EmptyPopErrors = map[string]bool{
	"no_available_partition": true,
	"lease_held":             true,
	"partition_not_found":    true,
}
