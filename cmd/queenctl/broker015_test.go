package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Payloads captured from a 0.15 broker (wire-0.15.md: J5, A3b, B11).
const (
	dlq015       = `{"messages":[{"consumerGroup":"__QUEUE_MODE__","createdAt":"2026-11-29T21:46:42.730Z","data":{"q":1},"errorMessage":"qfail","failedAt":"2026-11-29T21:46:42.890Z","id":"01a22946-4ca5-7000-8b57-e31f817a947f","partition":"Default","partitionId":"6fe37950-bb0b-468f-abe7-63ee63ce7ec0","producerSub":null,"queue":"smoke-qdlq","retryCount":0,"transactionId":"829ed9dd-093b-40ed-a533-c30b8979b28a"}],"pagination":{"limit":100,"offset":0}}`
	duplicate015 = `[{"index":0,"message_id":"01a22945-db81-7002-97e6-b5f483cf0bfb","queueName":"smoke-basic","status":"duplicate","transaction_id":"tx-basic-3"}]`
	notFound015  = `<html><body><h1>File Not Found</h1><hr><i>uWebSockets/20 Server</i></body></html>`
	id015        = "01a22946-4ca5-7000-8b57-e31f817a947f"
)

// broker015 serves the 0.15 answers for the DLQ routes queenctl uses, and records pushes.
func broker015(t *testing.T) (url string, pushes func() []string) {
	t.Helper()
	var mu sync.Mutex
	var pushed []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "GET" && r.URL.Path == "/api/v1/dlq":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, dlq015)
		case r.Method == "POST" && r.URL.Path == "/api/v1/push":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			pushed = append(pushed, string(b))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, duplicate015)
		default: // 0.15 has no replay or delete route
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, notFound015)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), pushed...)
	}
}

func TestBroker015_O24_ListWithoutTotal(t *testing.T) {
	t.Parallel()
	url, _ := broker015(t)
	r := queenctl(t, nil, "--server", url, "dlq", "list", "--queue", "smoke-qdlq")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, id015)
	assert.Contains(t, r.stdout, "1 dead letters (the broker does not report a total)")
}

func TestBroker015_O25_ReplayEmulatedAndDeleteUnsupported(t *testing.T) {
	t.Parallel()
	url, pushes := broker015(t)

	r := queenctl(t, nil, "--server", url, "dlq", "replay", id015)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "replayed "+id015+" as dlq:"+id015)
	assert.Contains(t, r.stdout, "the broker has no replay route")
	require.Equal(t, []string{`{"items":[{"queue":"smoke-qdlq","partition":"Default","payload":{"q":1},"transactionId":"dlq:` + id015 + `"}]}`}, pushes())

	r = queenctl(t, nil, "--server", url, "dlq", "delete", id015)
	assert.Equal(t, exitFailure, r.code)
	assert.True(t, strings.Contains(r.stderr, "not supported by this broker") && strings.Contains(r.stderr, "cannot delete dead letters"), r.stderr)
}
