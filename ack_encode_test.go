package queen

import (
	"encoding/json"
	"testing"
)

// The hand-written ack bodies must be byte for byte what json.Marshal writes.
func FuzzAppendAckMatchesMarshal(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\n\r\t\b\f\x00\x1f\x7f", "<&>", "é€😀", "\u2028\u2029", "\xff\xfe bad", "a\xe2\x80"} {
		f.Add(s, "pid", s, "completed", "g", s)
	}
	f.Fuzz(func(t *testing.T, txID, partitionID, leaseID, status, group, errText string) {
		a := ackBody{TransactionID: txID, PartitionID: partitionID, LeaseID: leaseID,
			Status: Status(status), ConsumerGroup: group, Error: errText}
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAck(nil, &a); string(got) != string(want) {
			t.Fatalf("appendAck = %s\nwant        %s", got, want)
		}
		batch := ackBatchBody{Acks: []ackBody{a, {TransactionID: errText, Status: StatusFailed}}, ConsumerGroup: leaseID}
		want, err = json.Marshal(&batch)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAckBatch(nil, &batch); string(got) != string(want) {
			t.Fatalf("appendAckBatch = %s\nwant             %s", got, want)
		}
		empty := ackBatchBody{ConsumerGroup: group}
		want, _ = json.Marshal(&empty)
		if got := appendAckBatch(nil, &empty); string(got) != string(want) {
			t.Fatalf("appendAckBatch = %s\nwant             %s", got, want)
		}
	})
}
