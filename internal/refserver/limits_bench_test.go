package refserver

import (
	"testing"

	"github.com/queenmq/queen-go/internal/names"
)

// The hostile-input checks a push pays for, side by side with the parsing it pays anyway:
//
//	go test -run '^$' -bench RequestChecks -count 3 ./queentest/
func BenchmarkRequestChecks(b *testing.B) {
	body := pushBody("orders", 100, 1024)
	b.Run("parse=100x1KB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			o, err := decodeObject(body)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := decodePushItems(o.raw("items"), "items"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checks=100x1KB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !isCanonicalPath("/api/v1/push") || checkUTF8(body) != nil || checkPushItemCount(100) != nil {
				b.Fatal("refused")
			}
			for range 100 {
				if names.Problem("orders") != "" {
					b.Fatal("refused")
				}
			}
		}
	})
}
