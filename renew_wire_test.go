package queen_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testutil"
)

func TestRenewSendsWholeSeconds_R138_O22(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		120 * time.Second:       `{"seconds":120}`,
		1500 * time.Millisecond: `{"seconds":2}`,
		time.Millisecond:        `{"seconds":1}`,
		0:                       `{"seconds":1}`,
	}
	for extend, want := range cases {
		t.Run(extend.String(), func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			// wire-0.15.md A6.
			mt.RegisterNoResponder(rec.Respond(200, `[{"error":null,"expiresAt":"2026-11-29T21:48:14.025Z","index":0,"leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","success":true}]`))
			exp, err := c.Renew(t.Context(), "01a22945-dbbd-7000-ae31-34cbc1c0d5de", extend)
			require.NoError(t, err)
			assert.Equal(t, time.Date(2026, 11, 29, 21, 48, 14, 25000000, time.UTC), exp)
			req := rec.Only(t)
			assert.Equal(t, http.MethodPost, req.Method)
			assert.Equal(t, "/api/v1/lease/01a22945-dbbd-7000-ae31-34cbc1c0d5de/extend", req.Path)
			jsonEq(t, want, req.Body)
		})
	}
}

// Every refusal, whatever its text, is a lost lease (R63, R64, O22).
func TestRenewRefusalIsErrLeaseExpired_O22(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"Lease not found", "Lease already expired", "Lease not active"} {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			// wire-0.15.md B5 / G6, and the other 0.15 texts.
			mt.RegisterNoResponder(rec.Respond(200, `[{"error":"`+reason+`","expiresAt":null,"index":0,"leaseId":"00000000-0000-0000-0000-000000000000","success":false}]`))
			exp, err := c.Renew(t.Context(), "00000000-0000-0000-0000-000000000000", time.Minute)
			require.ErrorIs(t, err, queen.ErrLeaseExpired)
			assert.Contains(t, err.Error(), reason)
			assert.True(t, exp.IsZero())
		})
	}
}

func TestRenewDatabaseErrorIsAPIError_O3(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  could not serialize access","success":false}`))
	_, err := c.Renew(t.Context(), "lid", time.Minute)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotErrorIs(t, err, queen.ErrLeaseExpired)
}

func TestRenewRefusesBadInput(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[]`))
	_, err := c.Renew(t.Context(), "", time.Minute)
	require.ErrorIs(t, err, queen.ErrInvalidOption)
	assert.Contains(t, err.Error(), "leaseID")
	_, err = c.Renew(t.Context(), "lid", -time.Second)
	require.ErrorIs(t, err, queen.ErrInvalidOption)
	assert.Contains(t, err.Error(), "extend")
	assert.Empty(t, rec.All())
}

func TestMessageRenewUsesItsLease(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015A4, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"error":null,"expiresAt":"2026-11-29T21:48:14.025Z","index":0,"leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","success":true}]`))
	_, err := m.Renew(t.Context(), 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/lease/01a22945-dbbd-7000-ae31-34cbc1c0d5de/extend", rec.Only(t).Path)
}
