package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
)

// handleGroupList answers GET /api/v1/consumer-groups (R160, R161).
func (s *Server) handleGroupList(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	queue, err := q.readName("queue")
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, s.engine.ConsumerGroups(queue))
}

// handleGroupDetail answers GET /api/v1/consumer-groups/{group} (R162).
func (s *Server) handleGroupDetail(w http.ResponseWriter, r *http.Request) {
	group, err := pathName(r, "group", "group")
	if err != nil {
		writeFailure(w, err)
		return
	}
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	queue, err := q.readName("queue")
	if err != nil {
		writeFailure(w, err)
		return
	}
	d, err := s.engine.ConsumerGroup(group, queue)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, d)
}

// handleLagging answers GET /api/v1/consumer-groups/lagging (R163).
func (s *Server) handleLagging(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	var lq broker.LaggingQuery
	if lq.MinLagSeconds, err = q.readInt("minLagSeconds", 0, maxInt, 3600, "must be a non-negative integer"); err != nil {
		writeFailure(w, err)
		return
	}
	if lq.Queue, err = q.readName("queue"); err != nil {
		writeFailure(w, err)
		return
	}
	if lq.Group, err = q.readName("consumerGroup"); err != nil {
		writeFailure(w, err)
		return
	}
	writeWire(w, s.engine.Lagging(lq))
}
