package queen

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// Renew extends the lease leaseID (every partition held under it) to at least now+extend,
// and returns the new expiry. extend is sent as whole seconds, rounded up, at least 1. A
// refused renewal (the lease expired, was released or is unknown) returns an error wrapping
// ErrLeaseExpired; one whose answer was lost, with retries off or after the last retry, an
// error wrapping ErrOutcomeUnknown: the lease may have been extended.
func (c *Client) Renew(ctx context.Context, leaseID string, extend time.Duration) (time.Time, error) {
	if leaseID == "" {
		return time.Time{}, invalidOption("leaseID", `""`, "needs the leaseId of a pop")
	}
	if leaseID == "." || leaseID == ".." {
		return time.Time{}, invalidOption("leaseID", leaseID, `must not be "." or ".."`)
	}
	if extend < 0 {
		return time.Time{}, invalidOption("extend", extend, "must not be negative")
	}
	secs := max(int64((extend+time.Second-1)/time.Second), 1)
	raw, err := wire.Marshal(&wire.ExtendRequest{Seconds: &secs})
	if err != nil {
		return time.Time{}, err
	}
	// An extend may be resent, but one whose answer was lost may have been applied.
	req := request{method: http.MethodPost, path: route.Extend.Path(leaseID), body: raw,
		route: route.Extend, once: true}
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, &req, buf); err != nil {
		return time.Time{}, err
	}
	return extendAnswer(buf.Bytes(), &req, leaseID)
}

// extendAnswer reads the answer to an extend of leaseID: the lease's new expiry, or its
// refusal as an error wrapping ErrLeaseExpired, whatever the broker's reason.
func extendAnswer(body []byte, req *request, leaseID string) (time.Time, error) {
	var results []wire.ExtendResult
	if err := decodeArray(body, req, &results); err != nil {
		return time.Time{}, err
	}
	if len(results) == 0 {
		return time.Time{}, &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: "empty extend answer"}
	}
	r := results[0]
	if !r.Success {
		reason := deref(r.Error)
		if reason == "" {
			reason = "refused"
		}
		return time.Time{}, fmt.Errorf("%w: renew lease %s: %s", ErrLeaseExpired, leaseID, reason)
	}
	return r.ExpiresAt.Value(), nil
}
