package jsonsplit

import (
	"fmt"
	"strings"
	"testing"
)

// popLike is a 100-message pop answer as the reference broker writes it.
var popLike = func() []byte {
	var b strings.Builder
	b.WriteString(`{"success":true,"queue":"bench","partition":"p01","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","consumerGroup":"__QUEUE_MODE__","messages":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"01a22945-db81-7000-89ce-1fc92ee0%04d","transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6%04d","traceId":null,"data":{"order":%d,"sku":"A-%04d","qty":3},"createdAt":"2026-11-29T21:46:13.767056Z","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partition":"p01","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","consumerGroup":"__QUEUE_MODE__","offset":%d,"deliveryAttempt":1}`, i, i, i, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}()

func BenchmarkWalkPopAnswer(b *testing.B) {
	b.SetBytes(int64(len(popLike)))
	for b.Loop() {
		it := Walk(popLike, 0)
		for _, val, ok := it.Member(); ok; _, val, ok = it.Member() {
			if popLike[val.Start] != '[' {
				continue
			}
			msgs := Walk(popLike, val.Start)
			for at, ok := msgs.Next(); ok; at, ok = msgs.Next() {
				fields := Walk(popLike, at)
				for _, _, ok := fields.Member(); ok; _, _, ok = fields.Member() {
				}
				msgs.SkipTo(fields.End())
			}
		}
	}
}
