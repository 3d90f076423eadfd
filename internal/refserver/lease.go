package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleExtend renews a lease.
func (s *Server) handleExtend(w http.ResponseWriter, r *http.Request) {
	x, err := readExtend(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if x.notInteger || x.seconds <= 0 {
		WriteError(w, http.StatusBadRequest, "seconds must be a positive integer, got "+clip(x.raw))
		return
	}
	leaseID, seconds := x.leaseID, min(x.seconds, maxLeaseSeconds) // any positive integer is valid
	res := s.engine.Extend(leaseID, int(seconds))
	if res.LeaseID == "" {
		res.LeaseID = leaseID
	}
	writeJSON(w, http.StatusOK, extendAnswer(&res))
}

// extendRequest is a lease extension as sent: seconds is the default when none is sent.
type extendRequest struct {
	leaseID    string
	seconds    int64
	notInteger bool       // seconds was sent, and is no integer
	raw        wire.Value // seconds as sent
}

// readExtend reads a lease extension.
func readExtend(w http.ResponseWriter, r *http.Request) (extendRequest, error) {
	o, err := readObject(w, r)
	if err != nil {
		return extendRequest{}, err
	}
	x := extendRequest{leaseID: r.PathValue("leaseId"), seconds: broker.DefaultExtendSeconds, raw: o.raw("seconds")}
	if n, ok, err := o.integer("seconds"); err != nil {
		x.notInteger = true
	} else if ok {
		x.seconds = n
	}
	return x, nil
}

// extendAnswer is the one-element extend array; a refusal has a null expiresAt.
func extendAnswer(res *broker.ExtendResult) []wire.ExtendResult {
	return []wire.ExtendResult{{LeaseID: res.LeaseID, Success: res.Success, Error: nullable(res.Error),
		ExpiresAt: wire.AtOrNil(res.ExpiresAt)}}
}
