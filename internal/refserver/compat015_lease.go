package refserver

// A lease extension on 0.15. What differs from 2.0: seconds defaults to 60 and any integer is
// taken, a non-numeric one is a 500, the lease id echoed is the one asked for, and expiresAt
// has milliseconds.

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/wire"
)

// handleExtend015 answers a lease extension as 0.15 does: seconds defaults to 60, a
// non-numeric one is a 500, and expiresAt has milliseconds.
func (s *Server) handleExtend015(w http.ResponseWriter, r *http.Request) {
	x, err := readExtend(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if x.notInteger {
		writeTypeError015(w, "seconds", "number")
		return
	}
	leaseID := x.leaseID
	res := s.engine.Extend(leaseID, int(min(max(x.seconds, 0), maxLeaseSeconds)))
	out := wire.Extend015{Error: nullable(res.Error), LeaseID: leaseID, Success: res.Success}
	if !res.ExpiresAt.IsZero() {
		out.ExpiresAt = &wire.Time015{Time: res.ExpiresAt}
	}
	writeJSON(w, http.StatusOK, []wire.Extend015{out})
}
