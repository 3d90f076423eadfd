package refserver

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

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
