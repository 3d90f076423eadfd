package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/wire"
)

// handleDeleteQueue deletes a queue and all its state.
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
