package admin_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/admin"
)

// O25: "It reports delete as unsupported." Callers who know only the standard library can
// tell, with errors.Is(err, errors.ErrUnsupported), as with an unsupported discovery pop (O10).
func TestDeleteDeadLetter015_O25_IsErrorsErrUnsupported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterNoResponder(httpmock.NewStringResponder(404, captured404))

	err := a.DeleteDeadLetter(context.Background(), firstDeadLetter)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, err, admin.ErrUnsupported)
	assert.ErrorIs(t, a.DeleteQueue(context.Background(), "q"), errors.ErrUnsupported)
}

// API.md QueueOptions: a zero LeaseTime, a nil RetryLimit and a nil DeadLetterQueue leave the
// option to the broker (it is not sent); new(0) and new(false) are sent as such.
func TestConfigureQueue_APIQueueOptionsBody_R5(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    admin.QueueOptions
		want string
	}{
		{"defaults", admin.QueueOptions{}, `{"queue":"orders","options":{}}`},
		{"zero values that mean something", admin.QueueOptions{RetryLimit: new(0), DeadLetterQueue: new(false)},
			`{"queue":"orders","options":{"retryLimit":0,"deadLetterQueue":false}}`},
		{"every option", admin.QueueOptions{LeaseTime: 90 * time.Second, RetryLimit: new(5), DeadLetterQueue: new(true),
			Namespace: "shop", Task: "bill"},
			`{"queue":"orders","namespace":"shop","task":"bill","options":{"leaseTime":90,"retryLimit":5,"deadLetterQueue":true}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, mt := mockAdmin(t)
			var mu sync.Mutex
			var bodies []string
			mt.RegisterResponder("POST", broker+"/api/v1/configure", func(req *http.Request) (*http.Response, error) {
				b, _ := io.ReadAll(req.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				return httpmock.NewStringResponse(200, `{"configured":true,"queue":"orders","queueId":"qid","partitionId":"pid","namespace":"","task":"","options":{"leaseTime":60,"retryLimit":3,"deadLetterQueue":true}}`), nil
			})
			require.NoError(t, a.ConfigureQueue(context.Background(), "orders", tc.o))
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, bodies, 1)
			assert.JSONEq(t, tc.want, bodies[0])
		})
	}
}
