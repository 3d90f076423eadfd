package queentest

import "net/http"

// handleHealth answers GET /health, open even with a token (R132).
func handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, []byte(`{"status":"healthy"}`))
}
