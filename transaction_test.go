package queen

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// A transaction answer of any bytes never panics the decoder. A committed one has an entry per
// result, every accepted push entry with a status; a rollback wraps ErrTransactionFailed, or
// ErrOutcomeUnknown when the first answer was lost (the resend's rollback says nothing of the
// first); an answer that cannot be read is an *APIError.
func FuzzTransactionAnswer(f *testing.F) {
	seedAnswers(f, "tx",
		`{"transactionId":"tx1","success":true,"results":[{"index":0,"type":"ack","success":true,"transactionId":"t1","partitionId":"p","error":null,"dlq":false,"leaseReleased":true},{"index":1,"type":"push","success":true,"status":"queued","transactionId":"t2","messageId":"m","partitionId":"p","queueName":"q","offset":3}]}`,
		`{"transactionId":"tx1","success":false,"error":"operation 0: Invalid or expired lease","results":[]}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, lost := range []bool{false, true} {
			req := answerRequest(route.Transaction)
			req.answerLost = lost
			res, err := transactionAnswer(body, req)
			var api *APIError
			switch {
			case err == nil:
				var w wire.TransactionAnswer
				require.NoError(t, wire.Unmarshal(body, &w))
				require.Len(t, res.Results, len(w.Results))
				for _, e := range res.Results {
					if e.Type == "push" && e.Success {
						assert.NotEmpty(t, e.Status)
					}
				}
			case errors.As(err, &api):
			case lost:
				assert.ErrorIs(t, err, ErrOutcomeUnknown)
				assert.NotErrorIs(t, err, ErrTransactionFailed, "a lost answer is never reported rolled back")
			default:
				assert.ErrorIs(t, err, ErrTransactionFailed)
			}
		}
	})
}
