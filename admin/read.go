package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/wire"
)

// errEmpty is an empty 200 body, 0.15's answer for "nothing" (an unknown group, an empty list).
var errEmpty = errors.New("empty answer")

// read GETs an introspection endpoint and decodes its body into out. It maps both brokers'
// "not found" answers to ErrNotFound (a 404 {"error":...}, or 0.15's 200 {"error":"... not
// found"}), any other error body to a *queen.APIError, and an empty body to errEmpty.
func (a *Admin) read(ctx context.Context, e endpoint, query url.Values, what string, out any) error {
	var raw json.RawMessage
	if err := a.call(ctx, e, query, nil, &raw); err != nil {
		return notFound(err, what)
	}
	if len(raw) == 0 {
		return errEmpty
	}
	var probe struct {
		Error *string `json:"error"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &probe) == nil && probe.Error != nil {
		apiErr := &queen.APIError{StatusCode: 200, Message: *probe.Error, Method: e.method, Path: e.path}
		if wire.ReadRefusalMeaning(*probe.Error) == wire.MeansNotFound {
			return fmt.Errorf("%w: %s (%w)", ErrNotFound, what, apiErr)
		}
		return apiErr
	}
	if err := wire.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("admin: %s %s: decoding the broker's answer: %w", e.method, e.path, err)
	}
	return nil
}

// orUnknown is a count the broker may not send: -1 when it does not.
func orUnknown(n *int64) int64 {
	if n == nil {
		return -1
	}
	return *n
}

// notFoundEmpty is ErrNotFound for 0.15's empty answer about something it does not know.
func notFoundEmpty(what string) error { return fmt.Errorf("%w: %s", ErrNotFound, what) }

// unsupported is ErrUnsupported for a read the broker cannot answer as asked.
func unsupported(what string) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, what)
}
