package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/testutil"
)

// queenctl against a 0.15 broker: the answers it captured, byte for byte, and the reference
// broker answering as 0.15 does.

// Answers of a 0.15 broker, byte for byte: a dead-letter list (no total, the message's id), a
// push of a transaction id stored before, and the 404 page of a route it lacks.
const (
	dlq015       = `{"messages":[{"consumerGroup":"__QUEUE_MODE__","createdAt":"2026-11-29T21:46:42.730Z","data":{"q":1},"errorMessage":"qfail","failedAt":"2026-11-29T21:46:42.890Z","id":"01a22946-4ca5-7000-8b57-e31f817a947f","partition":"Default","partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","producerSub":null,"queue":"smoke-qdlq","retryCount":0,"transactionId":"829ed9dd-093b-40ed-a533-c30b8979b28a"}],"pagination":{"limit":100,"offset":0}}`
	duplicate015 = `[{"index":0,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","queueName":"smoke-basic","status":"duplicate","transaction_id":"tx-basic-3"}]`
	notFound015  = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`
	id015        = "01a22946-4ca5-7000-8b57-e31f817a947f"
)

// captured015 is a broker that answers queenctl's dead-letter requests with those answers:
// the list, a duplicate for every push, and the 404 page for the rest (0.15 has no replay or
// delete route). The spy keeps every request.
func captured015(t *testing.T) (*testutil.Spy, string) {
	t.Helper()
	return testutil.NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := func(status int, body string) {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
		switch rt, _ := route.Match(r.Method, r.URL.EscapedPath()); rt {
		case route.DeadLetters:
			w.Header().Set("Content-Type", "application/json")
			answer(http.StatusOK, dlq015)
		case route.Push:
			w.Header().Set("Content-Type", "application/json")
			answer(http.StatusOK, duplicate015)
		default:
			answer(http.StatusNotFound, notFound015)
		}
	}))
}

// Against a 0.15 broker, dlq list says the broker reports no total.
func TestDLQListOn015SaysThereIsNoTotal(t *testing.T) {
	t.Parallel()
	_, url := captured015(t)
	r := queenctl(t, nil, "--server", url, "dlq", "list", "--queue", "smoke-qdlq")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, id015)
	assert.Contains(t, r.stdout, "1 dead letters (the broker does not report a total)")
}

// Against a 0.15 broker, dlq replay pushes the dead letter's data under dlq:<id> and says the
// broker has no replay route; dlq delete says the broker cannot delete dead letters.
func TestDLQReplayOn015IsAPushAndDeleteIsUnsupported(t *testing.T) {
	t.Parallel()
	spy, url := captured015(t)

	r := queenctl(t, nil, "--server", url, "dlq", "replay", id015)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "replayed "+id015+" as dlq:"+id015)
	assert.Contains(t, r.stdout, "the broker has no replay route")
	pushes := spy.Of(route.FamilyPush)
	require.Len(t, pushes, 1)
	assert.Equal(t, `{"items":[{"queue":"smoke-qdlq","partition":"Default","payload":{"q":1},"transactionId":"dlq:`+id015+`"}]}`, string(pushes[0].Body))

	r = queenctl(t, nil, "--server", url, "dlq", "delete", id015)
	assert.Equal(t, exitFailure, r.code)
	assert.True(t, strings.Contains(r.stderr, "not supported by this broker") && strings.Contains(r.stderr, "cannot delete dead letters"), r.stderr)
}

// A 0.15 broker answers the deletion of an unknown queue or group with a 200 that deleted
// nothing; queenctl says not found and exits 1, as on 2.0.
func TestDeletingAnUnknownQueueOrGroupOn015IsNotFound(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.push(t, "orders", 1)
	require.Len(t, b.pop(t, "orders", "billing"), 1)

	r := queenctl(t, b.env, "group", "delete", "billing")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "group", "delete", "billing")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "not found")

	r = queenctl(t, b.env, "queue", "delete", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = queenctl(t, b.env, "queue", "delete", "orders")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `queue delete "orders"`)
	assert.Contains(t, r.stderr, "not found")
}

// A 0.15 broker files dead letters whatever deadLetterQueue says: queenctl does not claim the
// dead-letter queue is off.
func TestQueueConfigureOn015DoesNotClaimTheDeadLetterQueueIsOff(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	r := queenctl(t, b.env, "queue", "configure", "orders", "--no-dlq")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "off")
	assert.Contains(t, r.stdout, "on (the broker ignores the setting)")
	assert.Contains(t, r.stdout, "dead-letter queue not changed: the broker ignores the setting")
}

// A 0.15 broker cannot page its dead-letter list, which queenctl says rather than list nothing;
// its replay is a push, and a repeated one stores nothing.
func TestDLQListAndReplayOn015CannotPageAndStoreNoSecondCopy(t *testing.T) {
	t.Parallel()
	b := newBroker015(t)
	b.fileDeadLetters(t, "orders", "billing", 1, 2, 3)

	r := queenctl(t, b.env, "dlq", "list", "--queue", "orders")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "3 dead letters (the broker does not report a total)")
	r = queenctl(t, b.env, "dlq", "list", "--queue", "orders", "--offset", "1")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "the broker cannot page")
	assert.NotContains(t, r.stdout, "0 of 3")

	ids := deadLetterIDs(t, b, "orders")
	require.Len(t, ids, 3)
	r = queenctl(t, b.env, "dlq", "replay", ids[0])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "by a push: the broker has no replay route")
	r = queenctl(t, b.env, "dlq", "replay", ids[0])
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "nothing stored")
	copies := b.pop(t, "orders", "shipping")
	assert.Len(t, copies, 4, "3 originals and one copy: the repeat stored nothing")
}
