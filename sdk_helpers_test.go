package queen_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

const mockBase = "http://broker.test"

// mockClient is a Client whose requests go to an httpmock transport of its own, so tests run
// in parallel. Retries wait a millisecond.
func mockClient(t *testing.T, opts ...queen.Option) (*queen.Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	all := append([]queen.Option{
		queen.WithHTTPClient(&http.Client{Transport: mt}),
		queen.WithRetry(2, time.Millisecond, 2*time.Millisecond),
	}, opts...)
	c, err := queen.New(mockBase, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, mt
}

// popOne pops the message of a canned pop answer, for ack and renew tests.
func popOne(t *testing.T, c *queen.Client, mt *httpmock.MockTransport, body string, group string) *queen.Message {
	t.Helper()
	var rec testutil.Spy
	mt.RegisterRegexpResponder(http.MethodGet, mustRegexp(`/api/v1/pop/`), rec.Respond(200, body))
	b := c.Queue("q")
	if group != "" {
		b = b.Group(group)
	}
	msgs, err := b.Pop(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs[0]
}

// jsonEq checks that a request's body is the JSON want.
func jsonEq(t *testing.T, want string, got []byte) {
	t.Helper()
	require.True(t, json.Valid(got), "not JSON: %s", got)
	require.JSONEq(t, want, string(got))
}

var mustRegexp = regexp.MustCompile
