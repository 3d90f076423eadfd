package refserver

import (
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// writeBody sends b as a JSON body with the given status.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	_, _ = w.Write(b) // a write error means the client left; nothing to do
}

// writeJSON sends v, a body of internal/wire, with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := wire.Marshal(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "encoding response: "+err.Error())
		return
	}
	writeBody(w, status, b)
}

// answerBuffers are reused for the answers written field by field: a busy broker writes one for
// every pop, ack and push, and a pop's can be large.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// writeAppended sends, with the given status, the answer that write appends to a reused buffer.
func writeAppended(w http.ResponseWriter, status int, write func(dst []byte) ([]byte, error)) {
	buf := answerBuffers.Get().(*[]byte)
	b, err := write((*buf)[:0])
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "encoding response: "+err.Error())
	} else {
		writeBody(w, status, b) // the body is written before this returns, so b can be reused
	}
	if cap(b) <= 1<<20 { // do not keep the buffer of a huge answer alive
		*buf = b[:0]
		answerBuffers.Put(buf)
	}
}

// WriteError sends {"error":msg}, the body of every 4xx and 5xx.
func WriteError(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	b, _ := wire.Marshal(wire.ErrorAnswer{Error: msg}) // a struct of one string always encodes
	writeBody(w, status, b)
}

// writeNoContent answers 204 with no body.
func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// writeFailure maps an error from decoding or from the engine to its status.
func writeFailure(w http.ResponseWriter, err error) {
	var bad *badRequestError
	var engineBad *broker.BadRequest
	switch {
	case errors.As(err, &bad):
		WriteError(w, http.StatusBadRequest, bad.msg)
	case errors.As(err, &engineBad):
		WriteError(w, http.StatusBadRequest, engineBad.Msg)
	case errors.Is(err, errBodyTooLarge):
		WriteError(w, http.StatusRequestEntityTooLarge, "request body too large: the limit is "+strconv.Itoa(maxBodyBytes)+" bytes")
	case errors.Is(err, broker.ErrQueueNotFound),
		errors.Is(err, broker.ErrGroupNotFound),
		errors.Is(err, broker.ErrDeadLetterNotFound),
		errors.Is(err, broker.ErrPartitionNotFound),
		errors.Is(err, broker.ErrMessageNotFound):
		WriteError(w, http.StatusNotFound, err.Error())
	default:
		WriteError(w, http.StatusInternalServerError, err.Error())
	}
}

// groupName names the group in full: "" is queue mode.
func groupName(g string) string {
	if g == "" {
		return broker.QueueMode
	}
	return g
}

// dataOr is a message's data, or absent when there is none.
func dataOr(data []byte, absent string) wire.Value {
	if len(data) == 0 {
		return wire.Value(absent)
	}
	return data
}

// nullable is s, or nil (null) for "". It copies s into a string of its own only when there
// is one: taking s's address would move s to the heap on every call, null or not.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	p := new(string)
	*p = s
	return p
}
