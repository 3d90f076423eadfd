package queen

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/queenmq/queen-go/internal/route"
)

// An extend answer of any bytes never panics the decoder. It is read as the new expiry, or as
// a refusal, which wraps ErrLeaseExpired whatever its text, or as an *APIError when it cannot
// be read: never two of these, never another error.
func FuzzExtendAnswer(f *testing.F) {
	seedAnswers(f, "extend",
		`[{"index":0,"leaseId":"<lid>","success":true,"error":null,"expiresAt":"2026-11-29T21:48:14.025Z"}]`,
		`[{"index":0,"leaseId":"<lid>","success":false,"error":"Lease not found","expiresAt":null}]`,
		`[{"success":true,"expiresAt":"soon"}]`)
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := extendAnswer(body, answerRequest(route.Extend), "lid")
		if err == nil {
			return
		}
		var api *APIError
		if errors.As(err, &api) {
			assert.NotErrorIs(t, err, ErrLeaseExpired)
			return
		}
		assert.ErrorIs(t, err, ErrLeaseExpired)
	})
}
