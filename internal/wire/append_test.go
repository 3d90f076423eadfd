package wire

import (
	"bytes"
	"testing"
)

// appendCases are answers of every shape the fast writers take: every optional member present
// and absent, nulls, escapes, invalid UTF-8, payloads with spaces and escapes, negative numbers.
func appendCases() []any {
	off, neg, attempt, pid, lid, trace, text := int64(7), int64(-3), 2, "p", "l\"q", "t\u2028", "x\xffy\n"
	full := Message{ID: "m", TransactionID: "t", TraceID: &trace, Data: Value(" { \"a\" : [1, 2,\"\\u00e9\"] } "),
		ProducerSub: &text, CreatedAt: "2026-11-29T21:33:13.427069Z", PartitionID: "p", Partition: "<eu>",
		LeaseID: "l", ConsumerGroup: "g", Queue: "q", Offset: &off, DeliveryAttempt: &attempt}
	bare := Message{Data: Value("null"), Offset: &neg}
	return []any{
		&PopAnswer{Success: new(true), Queue: "q", Partition: "Default", PartitionID: &pid, LeaseID: &lid,
			ConsumerGroup: "__QUEUE_MODE__", PartitionsClaimed: 3, Messages: []Message{full, bare, full}},
		&PopAnswer{},
		&PopAnswer{Success: new(false), Error: &text, Messages: []Message{}, Paused: true},
		&PopAnswer{Messages: []Message{{Data: Value(`"\u0041\/"`)}}},
		&PopAnswer{Messages: []Message{{Data: Value(`{"a":1,"a":2}`)}}},
		&PopAnswer{Messages: []Message{{Data: Value(`{"a":`)}}}, // not JSON: Marshal's error
		&PopAnswer{Messages: []Message{{}}},                     // no payload at all
		[]AckResult{
			{Index: 0, TransactionID: "t", AckOutcome: AckOutcome{Success: true, LeaseReleased: true}, QueueName: &pid, PartitionName: &lid},
			{Index: 1, TransactionID: text, AckOutcome: AckOutcome{Error: &text, DLQ: true}},
		},
		[]AckResult{},
		[]PushResult{
			{Index: 0, TransactionID: "t", Status: "queued", MessageID: "m", PartitionID: &pid, TraceID: &trace, QueueName: "q", Offset: &off},
			{Index: 12, TransactionID: text, Status: "failed", MessageID: "", QueueName: "", Error: text},
		},
		[]PushResult{},
	}
}

// appendAnswer writes v with its fast writer, after a prefix the writer must keep.
func appendAnswer(v any) ([]byte, error) {
	prefix := []byte("kept:")
	var b []byte
	var err error
	switch a := v.(type) {
	case *PopAnswer:
		b, err = AppendPopAnswer(prefix, a)
	case []AckResult:
		b, err = AppendAckResults(prefix, a)
	case []PushResult:
		b, err = AppendPushResults(prefix, a)
	}
	if !bytes.HasPrefix(b, []byte("kept:")) {
		return b, errPrefixLost
	}
	return b[len(prefix):], err
}

type prefixLost struct{}

func (prefixLost) Error() string { return "the bytes before the answer were lost" }

var errPrefixLost error = prefixLost{}

// checkLikeMarshal fails unless the fast writer writes v as Marshal does, or fails as it does.
func checkLikeMarshal(t *testing.T, v any) {
	t.Helper()
	want, wantErr := Marshal(v)
	got, err := appendAnswer(v)
	if err == errPrefixLost {
		t.Fatalf("%#v: %v", v, err)
	}
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%#v: error %v, Marshal's %v", v, err, wantErr)
	}
	if wantErr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nwrote   %s\nMarshal %s", v, got, want)
	}
}

// The hot answers written field by field are byte for byte what Marshal writes, so a client
// cannot tell which wrote them; where they cannot be written fast, Marshal writes them.
func TestAppendedAnswersAreWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	for _, v := range appendCases() {
		checkLikeMarshal(t, v)
	}
}

// FuzzAppendAnswers holds the fast writers to Marshal over any strings, payloads and numbers.
func FuzzAppendAnswers(f *testing.F) {
	f.Add("m", "t", `{"a":1}`, "p", int64(0), true)
	f.Add("x\xffy", "\u2028<>&", " [1, \"\\u00e9\" ] ", "", int64(-1), false)
	f.Add("", "", `{"a":`, "\"", int64(1)<<62, true)
	f.Fuzz(func(t *testing.T, id, text, data, name string, n int64, flag bool) {
		attempt := int(n)
		msg := Message{ID: id, TransactionID: text, Data: Value(data), CreatedAt: text, PartitionID: name,
			Partition: name, LeaseID: id, ConsumerGroup: name, Queue: text}
		if flag {
			msg.TraceID, msg.ProducerSub, msg.Offset, msg.DeliveryAttempt = &text, &name, &n, &attempt
		}
		pop := &PopAnswer{Queue: name, Partition: text, ConsumerGroup: id, PartitionsClaimed: attempt,
			Messages: []Message{msg, msg}, Paused: flag}
		if flag {
			pop.Success, pop.Error, pop.PartitionID, pop.LeaseID = &flag, &text, &id, &name
		}
		checkLikeMarshal(t, pop)
		ack := AckResult{Index: attempt, TransactionID: id, AckOutcome: AckOutcome{Success: flag, LeaseReleased: !flag, DLQ: flag}}
		if flag {
			ack.Error, ack.QueueName, ack.PartitionName = &text, &name, &id
		}
		checkLikeMarshal(t, []AckResult{ack, ack})
		push := PushResult{Index: attempt, TransactionID: id, Status: text, MessageID: name, QueueName: text, Error: name}
		if flag {
			push.PartitionID, push.TraceID, push.Offset = &id, &text, &n
		}
		checkLikeMarshal(t, []PushResult{push, push})
	})
}

// BenchmarkAppendAnswers writes a 100-message pop answer and the results of a 100-item ack and
// push, with Marshal and with the fast writers side by side, into a reused buffer as the broker
// does.
func BenchmarkAppendAnswers(b *testing.B) {
	pid, lid, off, attempt := "99fee5aa-5753-422b-be1c-ed7420de2cb2", "f5ba7391-6469-4851-b87a-0ea9404f65a7", int64(91), 1
	pop := &PopAnswer{Success: new(true), Queue: "orders", Partition: "eu-west", PartitionID: &pid, LeaseID: &lid,
		ConsumerGroup: "billing", PartitionsClaimed: 1}
	acks := make([]AckResult, 100)
	pushes := make([]PushResult, 100)
	for i := range 100 {
		pop.Messages = append(pop.Messages, Message{ID: "01a2315b-226a-794d-be17-8b4942b4e008",
			TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", CreatedAt: "2026-12-01T11:26:25.898604Z",
			Data:        Value(`{"customer":{"id":"cust-004000","tier":"gold"},"order":91370,"qty":1,"sku":"SKU-00000"}`),
			PartitionID: pid, Partition: "eu-west", LeaseID: lid, ConsumerGroup: "billing", Offset: &off, DeliveryAttempt: &attempt})
		acks[i] = AckResult{Index: i, TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96",
			AckOutcome: AckOutcome{Success: true, LeaseReleased: i == 99}, QueueName: &pop.Queue, PartitionName: &pop.Partition}
		pushes[i] = PushResult{Index: i, TransactionID: "01a2315b-2269-74c8-897e-ed8c51f1be96", Status: "queued",
			MessageID: "01a2315b-226a-794d-be17-8b4942b4e008", PartitionID: &pid, QueueName: "orders", Offset: &off}
	}
	for _, tc := range []struct {
		name   string
		v      any
		append func([]byte) ([]byte, error)
	}{
		{"pop", pop, func(dst []byte) ([]byte, error) { return AppendPopAnswer(dst, pop) }},
		{"ack", acks, func(dst []byte) ([]byte, error) { return AppendAckResults(dst, acks) }},
		{"push", pushes, func(dst []byte) ([]byte, error) { return AppendPushResults(dst, pushes) }},
	} {
		b.Run(tc.name+"/Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Marshal(tc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/Append", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = tc.append(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
