package refserver

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/testutil"
)

// emptyItemsPush is a push of n empty items to queue.
func emptyItemsPush(queue string, n int) string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"queue":"` + queue + `"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// A push of more than 10,000 items is refused whole, a million included.
func TestAPushCarriesAtMost10000Items(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, n := range []int{10001, 1_000_000} {
		c.Do("POST", "/api/v1/push", emptyItemsPush("big", n)).WantError(t, http.StatusBadRequest, "at most 10000 items per push")
	}
	if c.Pop("/api/v1/pop/queue/big", nil) != nil {
		t.Fatal("a refused push stored a message")
	}
	var results []testutil.PushResult
	c.Do("POST", "/api/v1/push", emptyItemsPush("big", 10000)).Want(t, http.StatusCreated, &results)
	if len(results) != 10000 {
		t.Fatalf("a 10,000-item push answered %d results", len(results))
	}
}

// A transaction's push operation has the same bound, and rolls back nothing it did not do.
func TestATransactionPushCarriesAtMost10000Items(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	items := strings.TrimSuffix(strings.TrimPrefix(emptyItemsPush("big", 10001), `{"items":`), `}`)
	r := c.Do("POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":`+items+`}]}`)
	if r.Status == http.StatusOK && !strings.Contains(string(r.Body), "at most 10000 items per push") {
		t.Fatalf("answer %d %s does not refuse the push", r.Status, r.Body)
	}
	if c.Pop("/api/v1/pop/queue/big", nil) != nil {
		t.Fatal("a refused transaction stored a message")
	}
}

// Invalid UTF-8 anywhere in a body is refused, and nothing is stored.
func TestABodyOfInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, tc := range []struct{ path, body string }{
		{"/api/v1/push", `{"items":[{"queue":"u","payload":"a` + "\xff" + `b"}]}`},
		{"/api/v1/push", `{"items":[{"queue":"u","payload":{"k` + "\xc3" + `":1}}]}`},
		{"/api/v1/configure", `{"queue":"u","namespace":"` + "\xed\xa0\x80" + `"}`}, // a UTF-8-encoded surrogate
		{"/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":"u","payload":"` + "\xfe" + `"}]}]}`},
		{"/api/v1/ack", `{"transactionId":"t","partitionId":"p","error":"` + "\x80" + `"}`},
	} {
		c.Do("POST", tc.path, tc.body).WantError(t, http.StatusBadRequest, "Invalid JSON: invalid UTF-8")
	}
	if c.Pop("/api/v1/pop/queue/u", nil) != nil {
		t.Fatal("a refused body stored a message")
	}
}

// Escapes are JSON, not bytes: a lone surrogate escape is kept as sent, and every answer
// is valid UTF-8.
func TestEscapesOfInvalidCodePointsAreKept(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	c.Do("POST", "/api/v1/push", `{"items":[{"queue":"esc","payload":"\ud800 and \u0000"}]}`).Want(t, http.StatusCreated, nil)
	r := c.Get("/api/v1/pop/queue/esc")
	if r.Status != http.StatusOK || !utf8.Valid(r.Body) {
		t.Fatalf("pop = %d, valid UTF-8 %v", r.Status, utf8.Valid(r.Body))
	}
	if !strings.Contains(string(r.Body), `"data":"\ud800 and \u0000"`) {
		t.Fatalf("the payload was not kept as sent: %s", r.Body)
	}
}

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
