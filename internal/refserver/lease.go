package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleExtend renews a lease.
func (s *Server) handleExtend(w http.ResponseWriter, r *http.Request) {
	leaseID := r.PathValue("leaseId")
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	seconds, ok, err := o.integer("seconds")
	if err != nil {
		WriteError(w, http.StatusBadRequest, "seconds must be a positive integer, got "+clip(o.raw("seconds")))
		return
	}
	if !ok {
		seconds = broker.DefaultExtendSeconds
	}
	if seconds <= 0 {
		WriteError(w, http.StatusBadRequest, "seconds must be a positive integer, got "+clip(o.raw("seconds")))
		return
	}
	seconds = min(seconds, maxLeaseSeconds) // any positive integer is valid
	res := s.engine.Extend(leaseID, int(seconds))
	if res.LeaseID == "" {
		res.LeaseID = leaseID
	}
	writeJSON(w, http.StatusOK, extendAnswer(&res))
}

// extendAnswer is the one-element extend array; a refusal has a null expiresAt.
func extendAnswer(res *broker.ExtendResult) []wire.ExtendResult {
	return []wire.ExtendResult{{LeaseID: res.LeaseID, Success: res.Success, Error: nullable(res.Error),
		ExpiresAt: wire.AtOrNil(res.ExpiresAt)}}
}
