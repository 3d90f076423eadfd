package queen

import "github.com/queenmq/queen-go/internal/jsonwrite"

// Ack bodies are written by hand: encoding/json's reflection cost more than the rest of an
// ack's encoding. The bytes are exactly what json.Marshal writes for ackBody and ackBatchBody.

// appendAckBatch writes body as json.Marshal would.
func appendAckBatch(b []byte, body *ackBatchBody) []byte {
	if body.Acks == nil {
		b = append(b, `{"acknowledgments":null`...)
	} else {
		b = appendAcks(b, body.Acks)
	}
	if body.ConsumerGroup != "" {
		b = append(b, `,"consumerGroup":`...)
		b = jsonwrite.AppendString(b, body.ConsumerGroup)
	}
	return append(b, '}')
}

func appendAcks(b []byte, acks []ackBody) []byte {
	b = append(b, `{"acknowledgments":[`...)
	for i := range acks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAck(b, &acks[i])
	}
	return append(b, ']')
}

// appendAck writes a as json.Marshal would.
func appendAck(b []byte, a *ackBody) []byte {
	b = append(b, `{"transactionId":`...)
	b = jsonwrite.AppendString(b, a.TransactionID)
	b = append(b, `,"partitionId":`...)
	b = jsonwrite.AppendString(b, a.PartitionID)
	if a.LeaseID != "" {
		b = append(b, `,"leaseId":`...)
		b = jsonwrite.AppendString(b, a.LeaseID)
	}
	b = append(b, `,"status":`...)
	b = jsonwrite.AppendString(b, string(a.Status))
	if a.ConsumerGroup != "" {
		b = append(b, `,"consumerGroup":`...)
		b = jsonwrite.AppendString(b, a.ConsumerGroup)
	}
	if a.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonwrite.AppendString(b, a.Error)
	}
	return append(b, '}')
}
