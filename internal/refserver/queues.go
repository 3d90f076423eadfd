package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/wire"
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
	writeJSON(w, http.StatusOK, wire.DeleteQueueAnswer{Deleted: true, Queue: queue})
}
