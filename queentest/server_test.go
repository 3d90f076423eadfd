package queentest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// WithLogger logs startup at Info and one line per request at Debug.
func TestWithLogger_OneLinePerRequest(t *testing.T) {
	t.Parallel()
	var logs testutil.LogBuffer
	_, c := start(t, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	c.Get("/api/v1/pop/queue/logged?batch=2")
	c.Get("/nope")
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
	c.Push(testutil.Item{Queue: "clock"})
	srv.Advance(time.Second)
	c.Push(testutil.Item{Queue: "clock"})
	res := c.MustPop("/api/v1/pop/queue/clock", testutil.Query("batch", "2"))
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

// Close answers waiting long polls empty at once, and later requests fail to connect.
func TestClose_AnswersWaitingPops(t *testing.T) {
	t.Parallel()
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	c := testutil.NewClient(t, srv.URL())
	got := make(chan testutil.Response, 1)
	go func() { got <- c.Get("/api/v1/pop/queue/closing?wait=true&timeout=60000") }()
	testutil.Eventually(t, "the pop to wait", func() bool { return srv.WaitingPops() == 1 })
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if r := testutil.Recv(t, got, "Close to answer the waiting pop"); r.Status != http.StatusNoContent { // its own timeout is 60 s
		t.Fatalf("the waiting pop got %d %s at Close, want 204", r.Status, r.Body)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := c.HC.Get(srv.URL() + "/health"); err == nil {
		t.Fatal("the closed broker still answers")
	}
}

// Start reports an address it cannot listen on.
func TestStart_BadAddress(t *testing.T) {
	t.Parallel()
	if srv, err := Start(WithAddr("256.0.0.1:http-nope")); err == nil {
		srv.Close()
		t.Fatal("Start on an invalid address succeeded")
	}
}

// TestCompat015UnknownVersionIsRefused: an unknown version is an error naming it.
func TestCompat015UnknownVersionIsRefused(t *testing.T) {
	t.Parallel()
	_, err := Start(WithCompat("1.0"))
	if err == nil || !strings.Contains(err.Error(), `"1.0"`) {
		t.Fatalf("Start(WithCompat(\"1.0\")) = %v, want an error naming the version", err)
	}
	for _, v := range []string{"", "2.0"} {
		srv, err := Start(WithCompat(v))
		if err != nil {
			t.Fatalf("WithCompat(%q): %v", v, err)
		}
		_ = srv.Close()
	}
}

// Handler serves the same broker with the same auth, in process.
func TestHandler_SameBrokerAndAuth(t *testing.T) {
	t.Parallel()
	srv, c := start(t, WithToken("tok"))
	c.Token = "tok"
	c.Push(testutil.Item{Queue: "inproc", TransactionID: "x"})

	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pop/queue/inproc", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("Handler without token: %d, want 401", rec.Code)
	}
	req := httptest.NewRequest("GET", "/api/v1/pop/queue/inproc", nil)
	req.Header.Set("Authorization", "Bearer tok")
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"transactionId":"x"`) {
		t.Fatalf("Handler pop: %d %s, want the message pushed over TCP", rec.Code, rec.Body)
	}
}
