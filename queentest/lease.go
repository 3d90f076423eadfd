package queentest

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/jsonwrite"
)

// defaultExtendSeconds is the extension of a body without seconds (R65).
const defaultExtendSeconds = 60

// handleExtend answers POST /api/v1/lease/{leaseId}/extend (R61–R65).
func (s *Server) handleExtend(w http.ResponseWriter, r *http.Request) {
	leaseID := r.PathValue("leaseId")
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	seconds, ok, err := o.integer("seconds")
	if err != nil {
		writeError(w, http.StatusBadRequest, "seconds must be a positive integer, got "+clip(o.raw("seconds")))
		return
	}
	if !ok {
		seconds = defaultExtendSeconds
	}
	if seconds <= 0 {
		writeError(w, http.StatusBadRequest, "seconds must be a positive integer, got "+clip(o.raw("seconds")))
		return
	}
	seconds = min(seconds, maxLeaseSeconds) // any positive integer is valid (R65)
	res := s.engine.Extend(leaseID, int(seconds))
	if res.LeaseID == "" {
		res.LeaseID = leaseID
	}
	writeWith(w, http.StatusOK, func(b []byte) []byte { return appendExtendResult(b, &res) })
}

// appendExtendResult writes §2.3's one-element extend array.
func appendExtendResult(b []byte, res *broker.ExtendResult) []byte {
	b = append(b, `[{"index":0,"leaseId":`...)
	b = jsonwrite.AppendString(b, res.LeaseID)
	b = append(b, `,"success":`...)
	b = appendBool(b, res.Success)
	b = append(b, `,"error":`...)
	b = appendNullableString(b, res.Error)
	b = append(b, `,"expiresAt":`...)
	if res.ExpiresAt.IsZero() {
		b = append(b, "null"...)
	} else {
		b = appendTime(b, res.ExpiresAt)
	}
	return append(b, "}]"...)
}
