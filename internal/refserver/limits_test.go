package refserver

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

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

// R146: a push of more than 10,000 items is refused whole, a million included.
func TestPush_AtMostTenThousandItems_R146(t *testing.T) {
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
func TestTransaction_PushAtMostTenThousandItems_R146(t *testing.T) {
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

// R147: invalid UTF-8 anywhere in a body is refused, and nothing is stored.
func TestInvalidUTF8_Refused_R147(t *testing.T) {
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

// R147: escapes are JSON, not bytes: a lone surrogate escape is kept as sent, and every answer
// is valid UTF-8.
func TestInvalidUTF8_EscapesKept_R147(t *testing.T) {
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
