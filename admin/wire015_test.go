package admin_test

// Decoding and fallbacks against a 0.15 broker (SPEC §4 O3, O16, O21, O24, O25), with the
// byte-exact payloads of wire-0.15.md.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/admin"
)

const broker = "http://broker.test"

// Captures from wire-0.15.md, verbatim.
const (
	// C8: two dead letters of smoke-dlq (no messageId, no total).
	capturedDLQ = `{"messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:37.062Z","data":{"will":"dlq"},"errorMessage":"poison","failedAt":"2026-11-29T21:46:37.193Z","id":"01a22946-3681-7000-9c08-1f027b8a1365","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"74996576-5b24-4669-be21-63d46c228641"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:36.677Z","data":{"will":"fail"},"errorMessage":"boom 2","failedAt":"2026-11-29T21:46:36.950Z","id":"01a22946-3500-7000-a777-52ea451cf116","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}],"pagination":{"limit":100,"offset":0}}`
	// A8: an empty list.
	capturedEmptyDLQ = `{"messages":[],"pagination":{"limit":100,"offset":0}}`
	// B11: the 404 page of a route 0.15 lacks.
	captured404 = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`
	// A3b: a duplicate push result (no partition_id, no trace_id, no offset).
	capturedDuplicate = `[{"index":0,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","queueName":"smoke-basic","status":"duplicate","transaction_id":"tx-basic-3"}]`
	// C6: a queued push result (no offset).
	capturedQueued = `[{"index":0,"message_id":"01a22946-3681-7000-9c08-1f027b8a1365","partition_id":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","queueName":"smoke-dlq","status":"queued","trace_id":null,"transaction_id":"74996576-5b24-4669-be21-63d46c228641"}]`
	// F3 and F4: seeks.
	capturedSeekTime = `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":false,"success":true,"targetTimestamp":"1970-01-01T00:00:00.000Z"}`
	capturedSeekEnd  = `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":true,"success":true,"targetTimestamp":null}`
	// G1: configure leaseTime=2 (0.15 echoes deadLetterQueue false when it was omitted).
	capturedConfigureG1 = `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":false,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":2,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":3,"ttl":3600,"windowBuffer":0},"partitionId":"dd2c5c1f-d21d-45e5-bfda-4fae8eb77fc2","queue":"smoke-expiry","queueId":"ee2f7973-47a1-469b-a45a-c2c19cdf6771","task":""}`
	// J1: configure retryLimit=0 (0.15 defaults leaseTime to 300).
	capturedConfigureJ1 = `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":300,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":0,"ttl":3600,"windowBuffer":0},"partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","queue":"smoke-qdlq","queueId":"148ec9b6-dc68-45ee-b98b-c950783dad17","task":""}`
	// F9 and F10: consumer-group deletions.
	capturedGroupOnQueue = `{"consumerGroup":"g-new2","deletedPartitions":1,"metadataDeleted":true,"queueName":"smoke-sub","success":true}`
	capturedGroup        = `{"consumerGroup":"g-from","deletedPartitions":1,"metadataDeleted":true,"success":true}`
	// The shape of a 0.15 database failure answered as 200 (O3).
	capturedDBFailure = `{"error":"ERROR:  invalid input syntax for type uuid: \"x\"","success":false}`

	firstDeadLetter  = "01a22946-3681-7000-9c08-1f027b8a1365"
	secondDeadLetter = "01a22946-3500-7000-a777-52ea451cf116"
)

// mockAdmin returns an Admin whose client talks to a mock transport only.
func mockAdmin(t *testing.T) (*admin.Admin, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	client, err := queen.New(broker, queen.WithHTTPClient(&http.Client{Transport: mt}), queen.WithRetry(0, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return admin.New(client), mt
}

// recordBody answers with status and body, keeping the request body for the test.
func recordBody(got *string, status int, body string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			*got = string(b)
		}
		return httpmock.NewStringResponse(status, body), nil
	}
}

func TestDeadLetters015_O24_MessageIDFromIDAndNoTotal(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "smoke-dlq", r.URL.Query().Get("queue"))
		return httpmock.NewStringResponse(200, capturedDLQ), nil
	})

	page, err := a.DeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq"})
	require.NoError(t, err)

	assert.Equal(t, -1, page.Total)
	assert.Equal(t, 100, page.Limit)
	assert.Equal(t, 0, page.Offset)
	require.Len(t, page.DeadLetters, 2)
	dl := page.DeadLetters[1]
	assert.Equal(t, secondDeadLetter, dl.ID)
	assert.Equal(t, secondDeadLetter, dl.MessageID)
	assert.Equal(t, "5d802a94-74a3-47aa-81a3-ba7b2d473c8f", dl.TransactionID)
	assert.Equal(t, "smoke-dlq", dl.Queue)
	assert.Equal(t, "p1", dl.Partition)
	assert.Equal(t, "f3e5c1ac-60c4-4885-9a5b-e911102ba69d", dl.PartitionID)
	assert.Equal(t, "g1", dl.ConsumerGroup)
	assert.Equal(t, "boom 2", dl.Error)
	assert.Equal(t, 1, dl.RetryCount)
	assert.JSONEq(t, `{"will":"fail"}`, string(dl.Data))
	assert.Equal(t, time.Date(2026, 11, 29, 21, 46, 36, 677e6, time.UTC), dl.CreatedAt.UTC())
	assert.Equal(t, time.Date(2026, 11, 29, 21, 46, 36, 950e6, time.UTC), dl.FailedAt.UTC())
}

func TestDeadLetters015_O24_LimitAppliedLocally(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", func(r *http.Request) (*http.Response, error) {
		assert.Equal(t, "1", r.URL.Query().Get("limit"))
		return httpmock.NewStringResponse(200, capturedDLQ), nil // 0.15 does not cap
	})

	page, err := a.DeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq", Limit: 1})
	require.NoError(t, err)
	require.Len(t, page.DeadLetters, 1)
	assert.Equal(t, firstDeadLetter, page.DeadLetters[0].ID)
	assert.Equal(t, -1, page.Total)
}

func TestAllDeadLetters015_OneRequestWhenNoTotal(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDLQ))

	all, err := a.AllDeadLetters(context.Background(), admin.DLQQuery{Queue: "smoke-dlq"})
	require.NoError(t, err)
	assert.Len(t, all, 2)
	assert.Equal(t, 1, mt.GetTotalCallCount(), "a broker that does not page is asked once")
}

func TestReplayDeadLetter015_O25_EmulatedByPush(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/"+secondDeadLetter+"/replay", httpmock.NewStringResponder(404, captured404))
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDLQ))
	var pushed string
	mt.RegisterResponder("POST", broker+"/api/v1/push", recordBody(&pushed, 200, capturedQueued))

	r, err := a.ReplayDeadLetter(context.Background(), secondDeadLetter)
	require.NoError(t, err)

	assert.Equal(t, `{"items":[{"queue":"smoke-dlq","partition":"p1","payload":{"will":"fail"},"transactionId":"dlq:`+secondDeadLetter+`"}]}`, pushed)
	assert.Equal(t, admin.Replayed{
		ID:            secondDeadLetter,
		TransactionID: "dlq:" + secondDeadLetter,
		PartitionID:   "f3e5c1ac-60c4-4885-9a5b-e911102ba69d",
		Offset:        -1,
		Emulated:      true,
	}, r)
}

func TestReplayDeadLetter015_O25_RepeatIsHarmlessDuplicate(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/"+secondDeadLetter+"/replay", httpmock.NewStringResponder(404, captured404))
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDLQ))
	mt.RegisterResponder("POST", broker+"/api/v1/push", httpmock.NewStringResponder(200, capturedDuplicate))

	r, err := a.ReplayDeadLetter(context.Background(), secondDeadLetter)
	require.NoError(t, err)
	assert.True(t, r.Emulated)
	assert.Equal(t, "dlq:"+secondDeadLetter, r.TransactionID)
	assert.Equal(t, "f3e5c1ac-60c4-4885-9a5b-e911102ba69d", r.PartitionID, "a duplicate has no partition_id: the dead letter's is used")
}

func TestReplayDeadLetter015_O25_UnknownIDIsNotFoundAndPushesNothing(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/nope/replay", httpmock.NewStringResponder(404, captured404))
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedEmptyDLQ))
	mt.RegisterResponder("POST", broker+"/api/v1/push", httpmock.NewStringResponder(200, capturedQueued))

	_, err := a.ReplayDeadLetter(context.Background(), "nope")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Contains(t, err.Error(), `"nope"`)
	assert.Equal(t, 0, mt.GetCallCountInfo()["POST "+broker+"/api/v1/push"])
}

func TestReplayDeadLetter015_O3_PushFailureReported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/"+firstDeadLetter+"/replay", httpmock.NewStringResponder(404, captured404))
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDLQ))
	mt.RegisterResponder("POST", broker+"/api/v1/push", httpmock.NewStringResponder(200, capturedDBFailure))

	_, err := a.ReplayDeadLetter(context.Background(), firstDeadLetter)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
}

func TestDeleteDeadLetter015_O25_Unsupported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/dlq/"+firstDeadLetter, httpmock.NewStringResponder(404, captured404))

	err := a.DeleteDeadLetter(context.Background(), firstDeadLetter)
	require.ErrorIs(t, err, admin.ErrUnsupported)
	assert.NotErrorIs(t, err, admin.ErrNotFound)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.True(t, apiErr.NotJSON)
	assert.Contains(t, err.Error(), "cannot delete dead letters")
	assert.Contains(t, err.Error(), firstDeadLetter)
}

// A 2.0 404 carries a JSON error and means the thing does not exist (R100, R101).
func TestReplayAndDelete_R100_JSON404IsNotFound(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/dlq/gone/replay", httpmock.NewStringResponder(404, `{"error":"dead letter not found"}`))
	mt.RegisterResponder("DELETE", broker+"/api/v1/dlq/gone", httpmock.NewStringResponder(404, `{"error":"dead letter not found"}`))

	_, err := a.ReplayDeadLetter(context.Background(), "gone")
	require.ErrorIs(t, err, admin.ErrNotFound)
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "dead letter not found", apiErr.Message)
	assert.Equal(t, 1, mt.GetTotalCallCount(), "no emulation on a JSON 404")

	err = a.DeleteDeadLetter(context.Background(), "gone")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.NotErrorIs(t, err, admin.ErrUnsupported)
}

func TestSeek015_F3_ToTime(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var sent string
	mt.RegisterResponder("POST", broker+"/api/v1/consumer-groups/g1/queues/smoke-basic/seek", recordBody(&sent, 200, capturedSeekTime))

	res, err := a.Seek(context.Background(), "g1", "smoke-basic", admin.SeekToTime(time.Unix(0, 0)))
	require.NoError(t, err)
	assert.Equal(t, `{"timestamp":"1970-01-01T00:00:00Z"}`, sent)
	assert.Equal(t, admin.SeekResult{ConsumerGroup: "g1", Queue: "smoke-basic", Target: time.Unix(0, 0).UTC(), PartitionsUpdated: 1}, res)
}

func TestSeek015_F4_ToEnd(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var sent string
	mt.RegisterResponder("POST", broker+"/api/v1/consumer-groups/g1/queues/smoke-basic/seek", recordBody(&sent, 200, capturedSeekEnd))

	require.NoError(t, a.SeekConsumerGroup(context.Background(), "g1", "smoke-basic", admin.SeekToEnd()))
	assert.Equal(t, `{"toEnd":true}`, sent)
}

func TestSeek015_O16_UnparseableAnsweredAs200IsAnError(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("POST", broker+"/api/v1/consumer-groups/g1/queues/smoke-basic/seek", httpmock.NewStringResponder(200, capturedDBFailure))

	err := a.SeekConsumerGroup(context.Background(), "g1", "smoke-basic", admin.SeekToEnd())
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 200, apiErr.StatusCode)
	assert.Equal(t, "POST", apiErr.Method)
	assert.Equal(t, "/api/v1/consumer-groups/g1/queues/smoke-basic/seek", apiErr.Path)
}

func TestDeadLetters015_O3_DatabaseFailureIsAnError(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("GET", broker+"/api/v1/dlq", httpmock.NewStringResponder(200, capturedDBFailure))

	_, err := a.DeadLetters(context.Background(), admin.DLQQuery{})
	var apiErr *queen.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Contains(t, apiErr.Message, "invalid input syntax")
}

func TestConfigure015_O21_G1(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var sent string
	mt.RegisterResponder("POST", broker+"/api/v1/configure", recordBody(&sent, 200, capturedConfigureG1))

	cfg, err := a.Configure(context.Background(), "smoke-expiry", admin.QueueOptions{LeaseTime: 2 * time.Second, RetryLimit: new(3)})
	require.NoError(t, err)
	assert.Equal(t, `{"queue":"smoke-expiry","options":{"leaseTime":2,"retryLimit":3}}`, sent)
	assert.Equal(t, admin.QueueConfig{
		Queue:       "smoke-expiry",
		QueueID:     "ee2f7973-47a1-469b-a45a-c2c19cdf6771",
		PartitionID: "dd2c5c1f-d21d-45e5-bfda-4fae8eb77fc2",
		LeaseTime:   2 * time.Second,
		RetryLimit:  3,
		// 0.15 files dead letters whatever deadLetterQueue says (O21).
		DeadLetterQueueIgnored: true,
	}, cfg)
}

func TestConfigure015_O21_J1(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	var sent string
	mt.RegisterResponder("POST", broker+"/api/v1/configure", recordBody(&sent, 200, capturedConfigureJ1))

	cfg, err := a.Configure(context.Background(), "smoke-qdlq", admin.QueueOptions{RetryLimit: new(0), DeadLetterQueue: new(true)})
	require.NoError(t, err)
	assert.Equal(t, `{"queue":"smoke-qdlq","options":{"retryLimit":0,"deadLetterQueue":true}}`, sent)
	assert.Equal(t, 300*time.Second, cfg.LeaseTime, "0.15 defaults leaseTime to 300")
	assert.Equal(t, 0, cfg.RetryLimit)
	assert.True(t, cfg.DeadLetterQueue)
}

func TestDeleteConsumerGroup015_F9_F10(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/g-new2/queues/smoke-sub", httpmock.NewStringResponder(200, capturedGroupOnQueue))
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/g-from", httpmock.NewStringResponder(200, capturedGroup))

	require.NoError(t, a.DeleteConsumerGroupOnQueue(context.Background(), "g-new2", "smoke-sub"))
	require.NoError(t, a.DeleteConsumerGroup(context.Background(), "g-from"))
	assert.Equal(t, 2, mt.GetTotalCallCount())
}

// O29: a 0.15 broker answers the deletion of an unknown queue or group with a 200 that deleted
// nothing (captures C3 and C6 of the introspection transcript); the SDK says not found.
func TestDeleteUnknown015_O29_IsNotFound(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/resources/queues/spec-insp-115691",
		httpmock.NewStringResponder(200, `{"deleted":true,"existed":false,"queue":"spec-insp-115691"}`))
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/spec-gC",
		httpmock.NewStringResponder(200, `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"success":true}`))
	mt.RegisterResponder("DELETE", broker+"/api/v1/consumer-groups/spec-gC/queues/q",
		httpmock.NewStringResponder(200, `{"consumerGroup":"spec-gC","deletedPartitions":0,"metadataDeleted":true,"queueName":"q","success":true}`))

	err := a.DeleteQueue(context.Background(), "spec-insp-115691")
	require.ErrorIs(t, err, admin.ErrNotFound)
	assert.Contains(t, err.Error(), `"spec-insp-115691"`)
	require.ErrorIs(t, a.DeleteConsumerGroup(context.Background(), "spec-gC"), admin.ErrNotFound)
	require.ErrorIs(t, a.DeleteConsumerGroupOnQueue(context.Background(), "spec-gC", "q"), admin.ErrNotFound)
}

func TestDeleteQueue015_NoRouteIsUnsupported(t *testing.T) {
	t.Parallel()
	a, mt := mockAdmin(t)
	mt.RegisterResponder("DELETE", broker+"/api/v1/resources/queues/smoke-basic", httpmock.NewStringResponder(404, captured404))

	err := a.DeleteQueue(context.Background(), "smoke-basic")
	require.ErrorIs(t, err, admin.ErrUnsupported)
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

var _ = json.Valid
var _ = errors.Is
