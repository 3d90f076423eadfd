package admin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

// A route the broker lacks is answered with a 404 page that is not JSON (a 0.15 broker has no
// dead-letter delete, say): the call gives ErrUnsupported, which callers who know only the
// standard library can tell with errors.Is(err, errors.ErrUnsupported), never ErrNotFound; the
// broker's *queen.APIError is wrapped too.
func TestARouteTheBrokerLacksIsErrUnsupported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterNoResponder(httpmock.NewStringResponder(404, captured404))

	err := a.DeleteDeadLetter(context.Background(), firstDeadLetter)
	require.ErrorIs(t, err, admin.ErrUnsupported)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.NotErrorIs(t, err, admin.ErrNotFound)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.True(t, apiErr.NotJSON)
	assert.Contains(t, err.Error(), "cannot delete dead letters")
	assert.Contains(t, err.Error(), firstDeadLetter)

	err = a.DeleteQueue(context.Background(), "smoke-basic")
	require.ErrorIs(t, err, admin.ErrUnsupported)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// A broker that fails answers with 200 and {"success":false,"error":...} (a 0.15 database
// error): every call returns it as a *queen.APIError with status 200, the broker's text, and
// the request it answered, never as a result or as "not found".
func TestARefusalAnsweredWith200IsAnAPIError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method, path string
		call               func(a *admin.Admin) error
	}{
		{"seek", "POST", "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", func(a *admin.Admin) error {
			return a.SeekConsumerGroup(context.Background(), "g1", "smoke-basic", admin.SeekToEnd())
		}},
		{"dead letters", "GET", "/api/v1/dlq", func(a *admin.Admin) error {
			_, err := a.DeadLetters(context.Background(), admin.DLQQuery{})
			return err
		}},
		{"messages", "GET", "/api/v1/messages", func(a *admin.Admin) error {
			_, err := a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691"})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, mt := mockAdmin(t)
			mt.RegisterResponder(tc.method, broker+tc.path, httpmock.NewStringResponder(200, capturedDBFailure))
			err := tc.call(a)
			var apiErr *queen.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 200, apiErr.StatusCode)
			assert.Contains(t, apiErr.Message, "invalid input syntax")
			assert.Equal(t, tc.method, apiErr.Method)
			assert.Equal(t, tc.path, apiErr.Path)
			assert.NotErrorIs(t, err, admin.ErrNotFound)
		})
	}
	t.Run("messages answered with an SQL error of its own", func(t *testing.T) {
		t.Parallel()
		a, mt := mockAdmin(t)
		mt.RegisterResponder("GET", broker+"/api/v1/messages", httpmock.NewStringResponder(200, capture015(t, "messages-from-garbage.json")))
		_, err := a.Messages(context.Background(), admin.MessageQuery{Queue: "spec-insp-115691"})
		var apiErr *queen.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Contains(t, apiErr.Message, "invalid input syntax")
		assert.NotErrorIs(t, err, admin.ErrNotFound)
	})
}

// Names travel as escaped path segments, never as extra path levels.
func TestPathSegmentsAreEscaped(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var path string
	mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		path = r.URL.EscapedPath()
		return httpmock.NewStringResponse(200, `{"success":true,"consumerGroup":"a/b","deletedPartitions":1}`), nil
	})

	require.NoError(t, a.DeleteConsumerGroup(context.Background(), "a/b c"))
	assert.Equal(t, "/api/v1/consumer-groups/a%2Fb%20c", path)
}
