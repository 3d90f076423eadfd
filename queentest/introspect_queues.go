package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
)

// handleQueueList answers GET /api/v1/status/queues (R158).
func (s *Server) handleQueueList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	f := broker.QueueFilter{Namespace: q.get("namespace"), Task: q.get("task")}
	if f.Limit, err = q.limit(100); err != nil {
		writeFailure(w, err)
		return
	}
	if f.Offset, err = q.offset(); err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, s.engine.Queues(f))
}

// handleQueueDetail answers GET /api/v1/status/queues/{queue} (R159).
func (s *Server) handleQueueDetail(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "queue", "queue")
	if err != nil {
		writeFailure(w, err)
		return
	}
	d, err := s.engine.QueueDetail(name)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, d)
}

// handleOverview answers GET /api/v1/resources/overview (R170).
func (s *Server) handleOverview(w http.ResponseWriter, _ *http.Request) {
	writeWire(w, s.engine.Overview())
}
