package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/jsonwrite"
)

// handleDeleteQueue answers DELETE /api/v1/resources/queues/{queue} (R141).
func (s *Server) handleDeleteQueue(w http.ResponseWriter, r *http.Request) {
	queue := r.PathValue("queue")
	if err := checkName("queue", queue); err != nil {
		writeFailure(w, err)
		return
	}
	if err := s.engine.DeleteQueue(queue); err != nil {
		writeFailure(w, err)
		return
	}
	writeWith(w, http.StatusOK, func(b []byte) []byte {
		b = append(b, `{"deleted":true,"queue":`...)
		b = jsonwrite.AppendString(b, queue)
		return append(b, '}')
	})
}
