package admin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Answers of a 0.15 broker to the calls that change things, byte for byte.
const (
	// Two dead letters of queue smoke-dlq: no messageId, no total.
	capturedDLQ = `{"messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:37.062Z","data":{"will":"dlq"},"errorMessage":"poison","failedAt":"2026-11-29T21:46:37.193Z","id":"01a22946-3681-7000-9c08-1f027b8a1365","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"74996576-5b24-4669-be21-63d46c228641"},{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:36.677Z","data":{"will":"fail"},"errorMessage":"boom 2","failedAt":"2026-11-29T21:46:36.950Z","id":"01a22946-3500-7000-a777-52ea451cf116","partition":"p1","partitionId":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","producerSub":null,"queue":"smoke-dlq","retryCount":1,"transactionId":"5d802a94-74a3-47aa-81a3-ba7b2d473c8f"}],"pagination":{"limit":100,"offset":0}}`
	// An empty dead-letter list.
	capturedEmptyDLQ = `{"messages":[],"pagination":{"limit":100,"offset":0}}`
	// The 404 page of a route the broker lacks: HTML, not JSON.
	captured404 = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`
	// A push result for a transaction id stored before: no partition_id, trace_id or offset.
	capturedDuplicate = `[{"index":0,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","queueName":"smoke-basic","status":"duplicate","transaction_id":"tx-basic-3"}]`
	// A push result for a stored message: no offset.
	capturedQueued = `[{"index":0,"message_id":"01a22946-3681-7000-9c08-1f027b8a1365","partition_id":"f3e5c1ac-60c4-4885-9a5b-e911102ba69d","queueName":"smoke-dlq","status":"queued","trace_id":null,"transaction_id":"74996576-5b24-4669-be21-63d46c228641"}]`
	// A seek to a time, and one to the end.
	capturedSeekTime = `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":false,"success":true,"targetTimestamp":"1970-01-01T00:00:00.000Z"}`
	capturedSeekEnd  = `{"consumerGroup":"g1","partitionsUpdated":1,"queueName":"smoke-basic","seekToEnd":true,"success":true,"targetTimestamp":null}`
	// A configure with leaseTime 2: every option echoed, deadLetterQueue false though it was
	// not sent.
	capturedConfigureLease2 = `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":false,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":2,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":3,"ttl":3600,"windowBuffer":0},"partitionId":"dd2c5c1f-d21d-45e5-bfda-4fae8eb77fc2","queue":"smoke-expiry","queueId":"ee2f7973-47a1-469b-a45a-c2c19cdf6771","task":""}`
	// A configure with retryLimit 0: the lease time defaults to 300 s.
	capturedConfigureNoRetries = `{"configured":true,"namespace":"","options":{"completedRetentionSeconds":0,"deadLetterQueue":true,"delayedProcessing":0,"dlqAfterMaxRetries":false,"encryptionEnabled":false,"leaseTime":300,"maxSize":0,"maxWaitTimeSeconds":0,"priority":0,"retentionEnabled":false,"retentionSeconds":0,"retryDelay":1000,"retryLimit":0,"ttl":3600,"windowBuffer":0},"partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","queue":"smoke-qdlq","queueId":"148ec9b6-dc68-45ee-b98b-c950783dad17","task":""}`
	// Deleting a consumer group on one queue, and on every queue.
	capturedGroupOnQueue = `{"consumerGroup":"g-new2","deletedPartitions":1,"metadataDeleted":true,"queueName":"smoke-sub","success":true}`
	capturedGroup        = `{"consumerGroup":"g-from","deletedPartitions":1,"metadataDeleted":true,"success":true}`
	// A database failure, answered with 200.
	capturedDBFailure = `{"error":"ERROR:  invalid input syntax for type uuid: \"x\"","success":false}`

	firstDeadLetter  = "01a22946-3681-7000-9c08-1f027b8a1365"
	secondDeadLetter = "01a22946-3500-7000-a777-52ea451cf116"
)

// capture015 reads an answer captured from a 0.15 broker, kept byte for byte in
// testdata/introspection015.
func capture015(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "introspection015", name))
	require.NoError(t, err)
	return string(bytes.TrimSuffix(b, []byte("\n")))
}

// excerptArray joins an excerpt's byte-exact elements, one per line, into the array they were
// cut from.
func excerptArray(t testing.TB, name string) string {
	t.Helper()
	return "[" + strings.ReplaceAll(capture015(t, name), "\n", ",") + "]"
}

// Partition ids of the 0.15 captures.
const (
	p0ID = "4166a400-c99c-4023-ba82-2b290ea47e34"
	p1ID = "07f80c2c-b60a-4353-9bbd-c12365d46fd8"
)

func ms015(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustRegexp(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }
