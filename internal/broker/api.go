// Package broker is the reference broker's engine: queues, partitions, offsets, consumer groups,
// leases, retry budgets, dead letters, subscription starts, seek and transactions, all in memory.
// It has no HTTP in it and takes time from an injected Clock. Input shape validation (JSON types,
// query parsing) belongs to the HTTP layer; the engine applies requests that are well-formed.
package broker

import (
	"errors"
	"time"
)

// QueueMode is the shared group of pops that name none.
const QueueMode = "__QUEUE_MODE__"

// Errors the HTTP layer maps to status codes.
var (
	ErrQueueNotFound      = errors.New("queue not found")          // 404
	ErrGroupNotFound      = errors.New("consumer group not found") // 404
	ErrDeadLetterNotFound = errors.New("dead letter not found")    // 404
)

// BadRequest is a refusal the HTTP layer answers with 400 and this text.
type BadRequest struct{ Msg string }

func (e *BadRequest) Error() string { return e.Msg }

// ConfigureRequest is a configure request. Nil options take their defaults.
type ConfigureRequest struct {
	Queue, Namespace, Task string
	LeaseTime              *int
	RetryLimit             *int
	DeadLetterQueue        *bool
	Options                map[string][]byte // every option as sent (its JSON text), echoed back
}

// ConfigureResult is the answer to a configure.
type ConfigureResult struct {
	QueueID, PartitionID, Queue, Namespace, Task string
	Options                                      map[string][]byte // effective options, as JSON text
}

// PushItem is one validated push item.
type PushItem struct {
	Queue, Partition string // Partition "" means "Default"
	Payload          []byte // the message's JSON text, stored as given (a copy: the caller keeps its buffer)
	TransactionID    string // "" means: make a UUID
	TraceID          string // "" means none
}

// PushResult is one item's outcome.
type PushResult struct {
	Index                            int
	TransactionID, Status, MessageID string // Status "queued" or "duplicate"
	PartitionID, QueueName           string
	TraceID                          string // "" means none
	Offset                           int64
}

// PopRequest is one validated pop. Zero values mean "not sent".
type PopRequest struct {
	Queue     string // "" with Discovery
	Partition string // "" for any partition; a name pops that partition alone
	Discovery bool   // a pop by namespace and task, of any queue they label
	Namespace string
	Task      string

	Group        string        // "" means QueueMode
	Batch        int           // 0: default or autopilot
	Partitions   int           // 0: default or autopilot
	Wait         bool          // long-poll
	Timeout      time.Duration // real time; used only with Wait
	LeaseSeconds int           // 0: queue's leaseTime
	AutoAck      bool
	Autopilot    bool
	Conflation   bool

	SubscriptionMode string     // "", "new" or "all"
	SubscriptionFrom *time.Time // set when subscriptionFrom was a time
	FromNow          bool       // subscriptionFrom=now
}

// PopResult is a pop's answer. Messages empty means 204, or 200 {"messages":[]} when Conflating.
type PopResult struct {
	Queue, Partition, PartitionID, LeaseID, ConsumerGroup string
	PartitionsClaimed                                     int
	Messages                                              []Message
	ConflatingEmpty                                       bool        // answer 200 {"messages":[]}
	Empty                                                 EmptyReason // why nothing was handed out, in Mode015 only
}

// Message is one handed-out message.
type Message struct {
	ID, TransactionID      string
	TraceID                string // "" means none
	Data                   []byte // JSON text
	CreatedAt              time.Time
	PartitionID, Partition string
	LeaseID, ConsumerGroup string
	Offset                 int64
	DeliveryAttempt        int
}

// AckItem is one ack. Status "" means completed; Group "" means QueueMode.
type AckItem struct {
	TransactionID, PartitionID, LeaseID string
	Status, Group, Error                string
}

// AckResult is one item's outcome. Error is "" on success (and on a refusal without
// a reason); QueueName and PartitionName are "" when the partition is unknown.
type AckResult struct {
	Index                    int
	TransactionID            string
	Success                  bool
	Error                    string
	QueueName, PartitionName string
	LeaseReleased, DLQ       bool
}

// ExtendResult is the outcome of a lease extension. A refusal has an Error and no
// ExpiresAt.
type ExtendResult struct {
	LeaseID   string
	Success   bool
	Error     string
	ExpiresAt time.Time
}

// TxOp is one transaction operation: Type "ack" with Ack, or "push" with Push.
type TxOp struct {
	Type string
	Ack  AckItem
	Push []PushItem
}

// TxEntry is one entry of a transaction's results.
type TxEntry struct {
	Index                        int
	Type                         string // "ack" or "push"
	Success                      bool
	TransactionID, PartitionID   string
	Error                        string // ack entries; "" on success
	DLQ, LeaseReleased           bool   // ack entries
	Status, MessageID, QueueName string // push entries
	Offset                       int64  // push entries
}

// TxResult is a transaction's answer; Success false is a rollback with Error "operation <n>: <reason>".
type TxResult struct {
	TransactionID string
	Success       bool
	Error         string
	Results       []TxEntry
}

// DLQQuery filters the dead-letter list. Empty strings and nil times do not filter.
type DLQQuery struct {
	Queue, Group, Partition string
	From, To                *time.Time
	Limit, Offset           int
}

// DeadLetter is one dead-letter record.
type DeadLetter struct {
	ID, MessageID, TransactionID, PartitionID string
	Queue, Partition, ConsumerGroup           string
	ErrorMessage                              string
	RetryCount                                int
	Data                                      []byte // JSON text
	TraceID                                   string // "" means none
	CreatedAt, FailedAt                       time.Time
}

// ReplayResult is the answer to a replay.
type ReplayResult struct {
	ID, TransactionID, PartitionID string
	Offset                         int64
}

// SeekResult is the answer to a seek.
type SeekResult struct {
	PartitionsUpdated int
}
