package queentest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/jsonwrite"
)

// Hot responses (pop, push, ack) are written with append-style encoders into pooled buffers:
// encoding/json's reflection would otherwise dominate the broker's cost per message.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeBody sends b as a JSON body with the given status.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	_, _ = w.Write(b) // a write error means the client left; nothing to do
}

// writeWith builds a body with build into a pooled buffer and sends it.
func writeWith(w http.ResponseWriter, status int, build func([]byte) []byte) {
	bp := bufPool.Get().(*[]byte)
	b := build((*bp)[:0])
	writeBody(w, status, b)
	if cap(b) <= 1<<20 { // keep huge buffers out of the pool
		*bp = b
		bufPool.Put(bp)
	}
}

// writeJSON encodes v with encoding/json; used for the cold routes.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encoding response: "+err.Error())
		return
	}
	writeBody(w, status, b)
}

// writeError sends {"error":msg}, the body of every 4xx and 5xx (§2.1).
func writeError(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	writeWith(w, status, func(b []byte) []byte {
		b = append(b, `{"error":`...)
		b = jsonwrite.AppendString(b, msg)
		return append(b, '}')
	})
}

// writeNoContent answers 204 with no body (R41).
func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// writeFailure maps an error from decoding or from the engine to its status (R131, R134).
func writeFailure(w http.ResponseWriter, err error) {
	var bad *badRequestError
	var engineBad *broker.BadRequest
	switch {
	case errors.As(err, &bad):
		writeError(w, http.StatusBadRequest, bad.msg)
	case errors.As(err, &engineBad):
		writeError(w, http.StatusBadRequest, engineBad.Msg)
	case errors.Is(err, errBodyTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "request body too large: the limit is "+strconv.Itoa(maxBodyBytes)+" bytes")
	case errors.Is(err, broker.ErrQueueNotFound),
		errors.Is(err, broker.ErrGroupNotFound),
		errors.Is(err, broker.ErrDeadLetterNotFound),
		errors.Is(err, broker.ErrPartitionNotFound),
		errors.Is(err, broker.ErrMessageNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// timeLayout is §2.1's written timestamp: RFC 3339 UTC, Z, exactly six fractional digits.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// nullable is s, or nil (null) for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// appendNullableString writes s, or null when s is "".
func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonwrite.AppendString(b, s)
}

// appendRaw writes a stored JSON value, or fallback when there is none.
func appendRaw(b []byte, raw json.RawMessage, fallback string) []byte {
	if len(raw) == 0 {
		return append(b, fallback...)
	}
	return append(b, raw...)
}
