package refserver

import (
	"net/http"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// handleSeek moves a group's cursors on a queue to a time, or to the end.
func (s *Server) handleSeek(w http.ResponseWriter, r *http.Request) {
	group, queue := r.PathValue("group"), r.PathValue("queue")
	if err := checkSeekNames(group, queue); err != nil {
		writeFailure(w, err)
		return
	}
	toEnd, ts, err := decodeSeek(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	res, err := s.engine.Seek(group, queue, toEnd, ts)
	if err != nil {
		writeFailure(w, err)
		return
	}
	var target *wire.Time
	if !toEnd {
		target = &wire.Time{Time: ts}
	}
	writeJSON(w, http.StatusOK, wire.SeekAnswer{
		Success:           true,
		ConsumerGroup:     group,
		QueueName:         queue,
		SeekToEnd:         toEnd,
		TargetTimestamp:   target,
		PartitionsUpdated: res.PartitionsUpdated,
	})
}

// decodeSeek reads exactly one of a string timestamp or "toEnd":true.
func decodeSeek(w http.ResponseWriter, r *http.Request) (toEnd bool, ts time.Time, err error) {
	o, err := readObject(w, r)
	if err != nil {
		return false, ts, err
	}
	toEnd, _, err = o.boolean("toEnd")
	if err != nil {
		return false, ts, err
	}
	ts, hasTS, err := o.timestamp("timestamp")
	if err != nil {
		return false, ts, err
	}
	switch {
	case toEnd && hasTS:
		return false, ts, badRequest("specify either 'toEnd': true or 'timestamp', not both")
	case !toEnd && !hasTS:
		return false, ts, badRequest("Must specify either 'toEnd': true or 'timestamp'")
	}
	return toEnd, ts, nil
}

// handleDeleteGroup deletes a group on every queue.
func (s *Server) handleDeleteGroup(w http.ResponseWriter, r *http.Request) {
	s.deleteGroup(w, r, "")
}

// handleDeleteGroupOnQueue deletes a group on one queue.
func (s *Server) handleDeleteGroupOnQueue(w http.ResponseWriter, r *http.Request) {
	s.deleteGroup(w, r, r.PathValue("queue"))
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request, queue string) {
	group := r.PathValue("group")
	err := checkName("group", group)
	if err == nil && queue != "" {
		err = checkName("queue", queue)
	}
	if err != nil {
		writeFailure(w, err)
		return
	}
	qv, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	deleteMetadata, err := qv.boolean("deleteMetadata", true)
	if err != nil {
		writeFailure(w, err)
		return
	}
	n, err := s.engine.DeleteGroup(group, queue, deleteMetadata)
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.DeleteGroupAnswer{Success: true, ConsumerGroup: group, QueueName: queue,
		DeletedPartitions: &n, MetadataDeleted: deleteMetadata})
}
