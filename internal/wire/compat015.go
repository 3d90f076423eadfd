package wire

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The answers of a 0.15 broker where they differ from 2.0's, as the reference broker writes
// them in its 0.15 mode. Fields are declared in the alphabetical order 0.15 sends them in.

// TimeLayout015 is how 0.15 writes timestamps outside pop answers: milliseconds.
const TimeLayout015 = "2006-01-02T15:04:05.000Z"

// Time015 is a timestamp written in TimeLayout015.
type Time015 struct{ time.Time }

// MarshalJSONTo writes the time in TimeLayout015.
func (t Time015) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(t.UTC().Format(TimeLayout015)))
}

// Failure015 is 0.15's answer to a request its database refused: HTTP 200 with success false.
type Failure015 struct {
	Error   string `json:"error"`
	Success bool   `json:"success"`
}

// Pop015 is a 0.15 pop answer: messages, a claimed partition with nothing new (a leaseId that
// holds nothing), or, after a long poll, leaseId and partitionId null and no partitionsClaimed.
type Pop015 struct {
	ConsumerGroup     string       `json:"consumerGroup"`
	LeaseID           *string      `json:"leaseId"`
	Messages          []Message015 `json:"messages"`
	Partition         string       `json:"partition"`
	PartitionID       *string      `json:"partitionId"`
	PartitionsClaimed int          `json:"partitionsClaimed,omitzero"`
	Queue             string       `json:"queue"`
	Success           bool         `json:"success"`
}

// PopRefusal015 is a 0.15 pop that found nothing it could lease: no_available_partition,
// lease_held or partition_not_found.
type PopRefusal015 struct {
	Error    string       `json:"error"`
	Messages []Message015 `json:"messages"`
	Success  bool         `json:"success"`
}

// Message015 is a popped message as 0.15 sends it: no offset, no deliveryAttempt.
type Message015 struct {
	ConsumerGroup string  `json:"consumerGroup"`
	CreatedAt     Time    `json:"createdAt"`
	Data          Value   `json:"data"`
	ID            string  `json:"id"`
	LeaseID       string  `json:"leaseId"`
	Partition     string  `json:"partition"`
	PartitionID   string  `json:"partitionId"`
	ProducerSub   *string `json:"producerSub"`
	TraceID       *string `json:"traceId"`
	TransactionID string  `json:"transactionId"`
}

// PushQueued015 is a stored push item: snake_case keys and no offset.
type PushQueued015 struct {
	Index         int     `json:"index"`
	MessageID     string  `json:"message_id"`
	PartitionID   string  `json:"partition_id"`
	QueueName     string  `json:"queueName"`
	Status        string  `json:"status"`
	TraceID       *string `json:"trace_id"`
	TransactionID string  `json:"transaction_id"`
}

// PushDuplicate015 is a push item whose transactionId existed: no partition_id, no trace_id.
type PushDuplicate015 struct {
	Index         int    `json:"index"`
	MessageID     string `json:"message_id"`
	QueueName     string `json:"queueName"`
	Status        string `json:"status"`
	TransactionID string `json:"transaction_id"`
}

// AckResult015 is one ack result as 0.15 sends it: AckResult's keys, in 0.15's order.
type AckResult015 struct {
	DLQ           bool    `json:"dlq"`
	Error         *string `json:"error"`
	Index         int     `json:"index"`
	LeaseReleased bool    `json:"leaseReleased"`
	PartitionName *string `json:"partitionName"`
	QueueName     *string `json:"queueName"`
	Success       bool    `json:"success"`
	TransactionID string  `json:"transactionId"`
}

// Extend015 is one lease extension result; expiresAt has milliseconds.
type Extend015 struct {
	Error     *string  `json:"error"`
	ExpiresAt *Time015 `json:"expiresAt"`
	Index     int      `json:"index"`
	LeaseID   string   `json:"leaseId"`
	Success   bool     `json:"success"`
}

// Transaction015 is a committed 0.15 transaction; a rollback is a TxFailure015.
type Transaction015 struct {
	Results       []any  `json:"results"` // TxAck015 and TxPush015 entries
	Success       bool   `json:"success"`
	TransactionID string `json:"transactionId"`
}

// TxFailure015 is a 0.15 transaction that rolled back: its error, the results so far (none)
// and its transactionId.
type TxFailure015 struct {
	Error         string `json:"error"`
	Results       []any  `json:"results"`
	Success       bool   `json:"success"`
	TransactionID string `json:"transactionId"`
}

// TxAck015 is a transaction's ack entry: no leaseReleased, no partitionId.
type TxAck015 struct {
	DLQ           bool    `json:"dlq"`
	Error         *string `json:"error"`
	Index         int     `json:"index"`
	Success       bool    `json:"success"`
	TransactionID string  `json:"transactionId"`
	Type          string  `json:"type"`
}

// TxPush015 is a transaction's push entry: no status, no offset.
type TxPush015 struct {
	Index         int    `json:"index"`
	MessageID     string `json:"messageId"`
	PartitionID   string `json:"partitionId"`
	QueueName     string `json:"queueName"`
	Success       bool   `json:"success"`
	TransactionID string `json:"transactionId"`
	Type          string `json:"type"`
}

// DeadLetters015 is the 0.15 dead-letter list: no total.
type DeadLetters015 struct {
	Messages   []DeadLetter015 `json:"messages"`
	Pagination Pagination      `json:"pagination"`
}

// DeadLetter015 is a 0.15 dead letter: its id is the message's id; there is no messageId.
type DeadLetter015 struct {
	ConsumerGroup string  `json:"consumerGroup"`
	CreatedAt     Time015 `json:"createdAt"`
	Data          Value   `json:"data"`
	ErrorMessage  string  `json:"errorMessage"`
	FailedAt      Time015 `json:"failedAt"`
	ID            string  `json:"id"`
	Partition     string  `json:"partition"`
	PartitionID   string  `json:"partitionId"`
	ProducerSub   *string `json:"producerSub"`
	Queue         string  `json:"queue"`
	RetryCount    int     `json:"retryCount"`
	TransactionID string  `json:"transactionId"`
}

// Configure015 is 0.15's configure answer: every option, effective or default.
type Configure015 struct {
	Configured  bool       `json:"configured"`
	Namespace   string     `json:"namespace"`
	Options     Options015 `json:"options"`
	PartitionID string     `json:"partitionId"`
	Queue       string     `json:"queue"`
	QueueID     string     `json:"queueId"`
	Task        string     `json:"task"`
}

// Options015 are a 0.15 queue's options. Configure replaces them all: what a request leaves
// out takes its default (DefaultOptions015).
type Options015 struct {
	CompletedRetentionSeconds int  `json:"completedRetentionSeconds"`
	DeadLetterQueue           bool `json:"deadLetterQueue"`
	DelayedProcessing         int  `json:"delayedProcessing"`
	DLQAfterMaxRetries        bool `json:"dlqAfterMaxRetries"`
	EncryptionEnabled         bool `json:"encryptionEnabled"`
	LeaseTime                 int  `json:"leaseTime"`
	MaxSize                   int  `json:"maxSize"`
	MaxWaitTimeSeconds        int  `json:"maxWaitTimeSeconds"`
	Priority                  int  `json:"priority"`
	RetentionEnabled          bool `json:"retentionEnabled"`
	RetentionSeconds          int  `json:"retentionSeconds"`
	RetryDelay                int  `json:"retryDelay"`
	RetryLimit                int  `json:"retryLimit"`
	TTL                       int  `json:"ttl"`
	WindowBuffer              int  `json:"windowBuffer"`
}

// DefaultOptions015 are the options of a 0.15 configure that sets none.
func DefaultOptions015() Options015 {
	return Options015{LeaseTime: 300, RetryDelay: 1000, RetryLimit: 3, TTL: 3600}
}

// Seek015 is 0.15's seek answer; targetTimestamp has milliseconds.
type Seek015 struct {
	ConsumerGroup     string   `json:"consumerGroup"`
	PartitionsUpdated int      `json:"partitionsUpdated"`
	QueueName         string   `json:"queueName"`
	SeekToEnd         bool     `json:"seekToEnd"`
	Success           bool     `json:"success"`
	TargetTimestamp   *Time015 `json:"targetTimestamp"`
}
