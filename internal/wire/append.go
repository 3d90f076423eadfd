package wire

import (
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The answers a broker writes for every message it delivers, acks or stores (a pop's messages,
// an ack's results and a push's results) are written here without reflection, field by field:
// each Append function writes exactly the bytes Marshal writes for the same value, for a
// fraction of the CPU. Anything they do not write the fast way (a payload that is not valid
// JSON, say) falls back to Marshal, so the answer and its errors are Marshal's.

// rawWritten are the options a raw value (a payload) is written with, as Marshal writes it.
var rawWritten = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true),
	jsontext.PreserveRawStrings(true))

// AppendPopAnswer appends a as Marshal writes it.
func AppendPopAnswer(dst []byte, a *PopAnswer) ([]byte, error) {
	start := len(dst)
	w := appender{b: append(dst, '{')}
	if a.Success != nil {
		w.name(`"success":`).boolean(*a.Success)
	}
	if a.Error != nil {
		w.name(`"error":`).str(*a.Error)
	}
	w.optStr(`"queue":`, a.Queue).optStr(`"partition":`, a.Partition)
	if a.PartitionID != nil {
		w.name(`"partitionId":`).str(*a.PartitionID)
	}
	if a.LeaseID != nil {
		w.name(`"leaseId":`).str(*a.LeaseID)
	}
	w.optStr(`"consumerGroup":`, a.ConsumerGroup)
	if a.PartitionsClaimed != 0 {
		w.name(`"partitionsClaimed":`).int(int64(a.PartitionsClaimed))
	}
	w.name(`"messages":[`)
	for i := range a.Messages {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.message(&a.Messages[i])
	}
	w.b = append(w.b, ']')
	if a.Paused {
		w.name(`"paused":`).boolean(true)
	}
	w.b = append(w.b, '}')
	if w.failed {
		return appendMarshal(dst[:start], a)
	}
	return w.b, nil
}

// message appends one message of a pop answer.
func (w *appender) message(m *Message) {
	w.b = append(w.b, `{"id":`...)
	w.str(m.ID).name(`"transactionId":`).str(m.TransactionID).name(`"traceId":`).strOrNull(m.TraceID)
	w.name(`"data":`).raw(m.Data).name(`"producerSub":`).strOrNull(m.ProducerSub)
	w.name(`"createdAt":`).str(m.CreatedAt).optStr(`"partitionId":`, m.PartitionID)
	w.optStr(`"partition":`, m.Partition).name(`"leaseId":`).str(m.LeaseID)
	w.optStr(`"consumerGroup":`, m.ConsumerGroup).optStr(`"queue":`, m.Queue)
	if m.Offset != nil {
		w.name(`"offset":`).int(*m.Offset)
	}
	if m.DeliveryAttempt != nil {
		w.name(`"deliveryAttempt":`).int(int64(*m.DeliveryAttempt))
	}
	w.b = append(w.b, '}')
}

// AppendAckResults appends results as Marshal writes them.
func AppendAckResults(dst []byte, results []AckResult) ([]byte, error) {
	return appendArray(dst, results, func(b []byte, r *AckResult) []byte {
		w := appender{b: append(b, `{"index":`...)}
		w.int(int64(r.Index)).name(`"transactionId":`).str(r.TransactionID)
		w.name(`"success":`).boolean(r.Success).name(`"error":`).strOrNull(r.Error)
		w.name(`"leaseReleased":`).boolean(r.LeaseReleased).name(`"dlq":`).boolean(r.DLQ)
		w.name(`"queueName":`).strOrNull(r.QueueName).name(`"partitionName":`).strOrNull(r.PartitionName)
		return append(w.b, '}')
	})
}

// AppendPushResults appends results as Marshal writes them.
func AppendPushResults(dst []byte, results []PushResult) ([]byte, error) {
	return appendArray(dst, results, func(b []byte, r *PushResult) []byte {
		w := appender{b: append(b, `{"index":`...)}
		w.int(int64(r.Index)).name(`"transaction_id":`).str(r.TransactionID).name(`"status":`).str(r.Status)
		w.name(`"message_id":`).str(r.MessageID)
		if r.PartitionID != nil {
			w.name(`"partition_id":`).str(*r.PartitionID)
		}
		w.name(`"trace_id":`).strOrNull(r.TraceID).name(`"queueName":`).str(r.QueueName)
		if r.Offset != nil {
			w.name(`"offset":`).int(*r.Offset)
		}
		w.optStr(`"error":`, r.Error)
		return append(w.b, '}')
	})
}

// appendArray appends xs as a JSON array, each element appended by write, which always can.
func appendArray[T any](dst []byte, xs []T, write func(b []byte, x *T) []byte) ([]byte, error) {
	b := append(dst, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = write(b, &xs[i])
	}
	return append(b, ']'), nil
}

// appender writes JSON into b. Names are written with the comma that separates them from the
// member before, unless they open the object.
type appender struct {
	b      []byte
	failed bool // a value could not be written the fast way
}

// name appends a member's name, quoted, with its colon, after a comma unless it is the first.
func (w *appender) name(quoted string) *appender {
	if c := w.b[len(w.b)-1]; c != '{' && c != '[' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, quoted...)
	return w
}

// str appends s quoted. Invalid UTF-8 is written as U+FFFD, as Marshal writes it.
func (w *appender) str(s string) *appender {
	w.b, _ = jsontext.AppendQuote(w.b, s)
	return w
}

// optStr appends the member unless s is empty.
func (w *appender) optStr(quotedName, s string) *appender {
	if s != "" {
		w.name(quotedName).str(s)
	}
	return w
}

func (w *appender) strOrNull(s *string) *appender {
	if s == nil {
		w.b = append(w.b, "null"...)
		return w
	}
	return w.str(*s)
}

func (w *appender) boolean(v bool) *appender {
	w.b = strconv.AppendBool(w.b, v)
	return w
}

func (w *appender) int(n int64) *appender {
	w.b = strconv.AppendInt(w.b, n, 10)
	return w
}

// raw appends a raw value compacted, as Marshal writes it. Marshal also refuses a value nested
// deeper than its limit counting from the answer's top, which this does not check: a broker's
// payloads came nested in a push's request, at least as deep, under the same limit.
func (w *appender) raw(v Value) *appender {
	if len(v) == 0 {
		w.failed = true
		return w
	}
	var err error
	if w.b, err = jsontext.AppendFormat(w.b, v, rawWritten); err != nil {
		w.failed = true
	}
	return w
}

// appendMarshal appends what Marshal writes for v, for an answer that could not be written the
// fast way.
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
