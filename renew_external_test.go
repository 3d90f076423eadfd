package queen_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// Message.Renew and Client.Renew extend a live lease past its first end; a lease that was
// released or ran out cannot be renewed, nor its messages acked, and they come back.
func TestARenewalExtendsALiveLeaseOnly(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, mode testmode.Mode) {
		srv, c := modeClient(t, mode, queentest.WithManualClock())
		q := c.Queue("leases")
		leaseOn015(t, mode, c, "leases", 5)
		pushN(t, q, 2)
		msgs, err := q.Batch(1).LeaseTime(10 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, msgs, 1)

		exp, err := msgs[0].Renew(t.Context(), 60*time.Second)
		require.NoError(t, err)
		assert.WithinDuration(t, srv.Now().Add(60*time.Second), exp, time.Second)
		srv.Advance(30 * time.Second) // past the original 10s lease, within the renewal
		require.NoError(t, msgs[0].Ack(t.Context()))

		_, err = c.Renew(t.Context(), msgs[0].LeaseID, time.Minute)
		require.ErrorIs(t, err, queen.ErrLeaseExpired, "a released lease cannot be renewed")

		second, err := q.LeaseTime(5 * time.Second).Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, second, 1)
		srv.Advance(6 * time.Second)
		err = second[0].Ack(t.Context())
		require.ErrorIs(t, err, queen.ErrLeaseExpired)
		_, err = second[0].Renew(t.Context(), time.Minute)
		require.ErrorIs(t, err, queen.ErrLeaseExpired)

		redelivered, err := q.Pop(t.Context())
		require.NoError(t, err)
		require.Len(t, redelivered, 1)
		assert.Equal(t, mode.Attempt(2), redelivered[0].DeliveryAttempt)
	})
}

// A renewal sends the extension in whole seconds, rounded up, at least one (a 0.15 broker reads
// no seconds as 60), and returns the new expiry.
func TestARenewalSendsWholeSeconds(t *testing.T) {
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
			// A captured 0.15 extend answer.
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

// Every refusal, whatever its text (expired, released, unknown), is a lost lease.
func TestARefusedRenewalIsErrLeaseExpired(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"Lease not found", "Lease already expired", "Lease not active"} {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			// The texts a 0.15 broker refuses with.
			mt.RegisterNoResponder(rec.Respond(200, `[{"error":"`+reason+`","expiresAt":null,"index":0,"leaseId":"00000000-0000-0000-0000-000000000000","success":false}]`))
			exp, err := c.Renew(t.Context(), "00000000-0000-0000-0000-000000000000", time.Minute)
			require.ErrorIs(t, err, queen.ErrLeaseExpired)
			assert.Contains(t, err.Error(), reason)
			assert.True(t, exp.IsZero())
		})
	}
}

// A 0.15 database error answered as a 200 object is an *APIError, not a lost lease.
func TestARenewalAnsweredWithADatabaseErrorIsAnAPIError(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `{"error":"ERROR:  could not serialize access","success":false}`))
	_, err := c.Renew(t.Context(), "lid", time.Minute)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotErrorIs(t, err, queen.ErrLeaseExpired)
}

// A renewal without a lease or with a negative extension is refused before anything is sent.
func TestARenewalRefusesBadInput(t *testing.T) {
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

// Message.Renew renews the lease the message was delivered under.
func TestMessageRenewRenewsTheMessagesLease(t *testing.T) {
	t.Parallel()
	c, mt := mockClient(t)
	m := popOne(t, c, mt, pop015Group, "g1")
	var rec testutil.Spy
	mt.RegisterNoResponder(rec.Respond(200, `[{"error":null,"expiresAt":"2026-11-29T21:48:14.025Z","index":0,"leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","success":true}]`))
	_, err := m.Renew(t.Context(), 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/lease/01a22945-dbbd-7000-ae31-34cbc1c0d5de/extend", rec.Only(t).Path)
}

// Every captured 0.15 extend answer: the new expiry, or a refusal as ErrLeaseExpired, or a 400.
func TestEveryCaptured015ExtendAnswerIsRead(t *testing.T) {
	t.Parallel()
	for _, cp := range testutil.Captures(t, captures015, "extend") {
		t.Run(cp.Name(), func(t *testing.T) {
			t.Parallel()
			c, mt := mockClient(t)
			var rec testutil.Spy
			mt.RegisterNoResponder(rec.Respond(cp.Status, cp.Response))
			at, err := c.Renew(t.Context(), "01a22945-dbbd-7000-ae31-34cbc1c0d5de", time.Minute)
			if cp.Status != 200 {
				var apiErr *queen.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, cp.Status, apiErr.StatusCode)
				return
			}
			var want []struct {
				Success   bool
				ExpiresAt *time.Time
			}
			require.NoError(t, json.Unmarshal([]byte(cp.Response), &want))
			if !want[0].Success {
				require.ErrorIs(t, err, queen.ErrLeaseExpired)
				return
			}
			require.NoError(t, err)
			assert.True(t, want[0].ExpiresAt.Equal(at))
			jsonEq(t, `{"seconds":60}`, rec.Only(t).Body)
		})
	}
}
