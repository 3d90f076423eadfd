package queentest

import (
	"github.com/queenmq/queen-go/internal/testutil"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// WithLogger logs startup at Info and one line per request at Debug.
func TestWithLogger_OneLinePerRequest(t *testing.T) {
	t.Parallel()
	var logs testutil.LogBuffer
	_, c := start(t, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	c.get("/api/v1/pop/queue/logged?batch=2")
	c.get("/nope")
	out := logs.String()
	for _, want := range []string{
		"queen reference broker listening",
		"msg=request method=GET path=/api/v1/pop/queue/logged query=\"batch=2\" status=204",
		"msg=request method=GET path=/nope query=\"\" status=404",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
}

// WithManualClockAt fixes the broker's time: createdAt is that time until Advance moves it.
func TestWithManualClockAt_FixedTimestamps(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 21, 33, 13, 427069123, time.UTC)
	srv, c := start(t, WithManualClockAt(at))
	if !srv.Now().Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("Now() = %v, want %v", srv.Now(), at)
	}
	c.push(item{Queue: "clock"})
	srv.Advance(time.Second)
	c.push(item{Queue: "clock"})
	res := c.mustPop("/api/v1/pop/queue/clock", q("batch", "2"))
	if res.Messages[0].CreatedAt != "2026-11-29T21:33:13.427069Z" || res.Messages[1].CreatedAt != "2026-11-29T21:33:14.427069Z" {
		t.Fatalf("createdAt %s, %s", res.Messages[0].CreatedAt, res.Messages[1].CreatedAt)
	}
}

// Advance without a manual clock is a programming error, reported at once.
func TestAdvance_PanicsWithoutManualClock(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "WithManualClock") {
			t.Fatalf("recovered %v, want a panic naming WithManualClock", v)
		}
	}()
	srv.Advance(time.Second)
}

// R134: a panic inside a handler answers 500 {"error":...} and is logged.
func TestRecoverPanics_R134(t *testing.T) {
	t.Parallel()
	var logs testutil.LogBuffer
	h := recoverPanics(slog.New(slog.NewTextHandler(&logs, nil)), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("engine bug")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/dlq", nil))
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != `{"error":"internal error"}` {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "engine bug") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
}
