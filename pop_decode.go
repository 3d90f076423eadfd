package queen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/queenmq/queen-go/internal/jsonsplit"
)

// A pop answer is read the way encoding/json would read it into the answer's fields (keys
// matched exactly or else ignoring case, null leaving a field as it was, a repeated key
// applied again), but in one validation pass and one walk over the body: reflection and
// time.Parse were most of a consume loop's CPU.

// popAnswer is the top level of a pop answer: the 2.0 result and every 0.15 variant (§2.3,
// O2, O3).
type popAnswer struct {
	success, successSet bool
	errText             string
	errSet              bool
	messagesSet         bool // "messages" was an array (null unsets it)
	shared              [numShared]sharedText
	// mismatch is the first value of a wrong type. As in encoding/json, reading goes on past
	// it and only a malformed integer stops at once, so the same error is reported.
	mismatch error
}

func (a *popAnswer) mismatched(err error) {
	if a.mismatch == nil {
		a.mismatch = err
	}
}

// sharedText is a field a message takes from the top level when it has none of its own.
type sharedText struct {
	raw []byte // the quoted value; nil when absent
	s   string
}

// The fields both the answer and each message may carry.
const (
	sharedQueue = iota
	sharedPartition
	sharedPartitionID
	sharedLeaseID
	sharedGroup
	numShared
)

// wireMessage is one element of "messages" as spans of the body, so that a repeated
// "messages" key can be applied onto it as encoding/json would.
type wireMessage struct {
	id, transactionID, traceID string
	shared                     [numShared]jsonsplit.Span
	createdAt, data            jsonsplit.Span
	offset, attempt            optionalInt
}

// optionalInt is an integer field a 0.15 broker leaves out.
type optionalInt struct {
	v   int64
	set bool
}

// read reads an integer of at most 18 digits; null leaves o as it was.
func (o *optionalInt) read(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return fmt.Errorf("not an integer: %q", b)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return fmt.Errorf("not an integer: %q", b)
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	o.v, o.set = v, true
	return nil
}

// Member names of the answer and of a message, indexed as fieldIndex returns them.
var (
	answerFields  = []string{"queue", "partition", "partitionId", "leaseId", "consumerGroup", "success", "error", "messages"}
	messageFields = []string{"queue", "partition", "partitionId", "leaseId", "consumerGroup", "id", "transactionId", "traceId", "createdAt", "data", "offset", "deliveryAttempt"}
)

const (
	answerSuccess = numShared + iota
	answerError
	answerMessages
)

const (
	messageID = numShared + iota
	messageTransactionID
	messageTraceID
	messageCreatedAt
	messageData
	messageOffset
	messageAttempt
)

// fieldIndex returns the index in names of the field a quoted key selects, or -1. As in
// encoding/json, an exact match wins, then one ignoring case.
func fieldIndex(key []byte, names []string) int {
	inner := key[1 : len(key)-1]
	for i, n := range names {
		if string(inner) == n {
			return i
		}
	}
	plainASCII := true
	for _, c := range inner {
		if c >= utf8.RuneSelf || c == '\\' {
			plainASCII = false
			break
		}
	}
	if plainASCII { // the usual unknown key: no allocation, and only names of its length
		for i, n := range names {
			if len(n) == len(inner) && strings.EqualFold(string(inner), n) {
				return i
			}
		}
		return -1
	}
	k := jsonsplit.Unquote(key)
	for i, n := range names {
		if strings.EqualFold(k, n) {
			return i
		}
	}
	return -1
}

// jsonKind names a value's JSON type by its first byte.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// typeError is a member whose JSON type the field cannot hold.
func typeError(field, want string, v []byte) error {
	return fmt.Errorf("%s: want %s, got %s", field, want, jsonKind(v))
}

// wirePool keeps the scratch of a pop's messages between pops.
var wirePool = sync.Pool{New: func() any { return new([]wireMessage) }}

const maxPooledWire = 1000

// decodePop reads a 2xx pop body: messages, an empty variant, or a 0.15 error answered as 200.
func decodePop(body []byte, path, route string) ([]*Message, error) {
	notJSON := func(err error) error {
		return &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path,
			Message: "pop answer is not a JSON object: " + err.Error(), NotJSON: true}
	}
	if !json.Valid(body) {
		var v struct{}
		return nil, notJSON(json.Unmarshal(body, &v)) // the same syntax error encoding/json reports
	}
	wp := wirePool.Get().(*[]wireMessage)
	defer func() {
		if cap(*wp) > maxPooledWire {
			return // do not keep a huge batch's scratch alive
		}
		clear((*wp)[:cap(*wp)])
		*wp = (*wp)[:0]
		wirePool.Put(wp)
	}()
	var a popAnswer
	if err := a.decode(body, wp); err != nil {
		return nil, notJSON(err)
	}
	if a.mismatch != nil {
		return nil, notJSON(a.mismatch)
	}
	if a.successSet && !a.success && a.errSet && !emptyPopErrors[a.errText] {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: a.errText}
	}
	if !a.messagesSet {
		msg := "pop answer has no messages"
		if a.errSet {
			msg = a.errText
		}
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: msg}
	}
	return a.messages(body, *wp, route), nil
}

// decode applies the answer's members in order; the messages go to *wire.
func (a *popAnswer) decode(body []byte, wire *[]wireMessage) error {
	at := jsonsplit.SkipSpace(body, 0)
	switch body[at] {
	case 'n':
		return nil // null: no member at all
	case '{':
	default:
		a.mismatched(typeError("pop answer", "an object", body[at:]))
		return nil
	}
	it := jsonsplit.Walk(body, at)
	for key, val, ok := it.Member(); ok; key, val, ok = it.Member() {
		f := fieldIndex(key.Of(body), answerFields)
		if f < 0 {
			continue
		}
		v := val.Of(body)
		switch {
		case f < numShared:
			if v[0] == '"' {
				a.shared[f] = sharedText{raw: v, s: jsonsplit.Unquote(v)}
			} else if v[0] != 'n' {
				a.mismatched(typeError(answerFields[f], "a string", v))
			}
		case f == answerSuccess:
			switch v[0] {
			case 't', 'f':
				a.success, a.successSet = v[0] == 't', true
			case 'n':
				a.success, a.successSet = false, false
			default:
				a.mismatched(typeError("success", "a bool", v))
			}
		case f == answerError:
			switch v[0] {
			case '"':
				a.errText, a.errSet = jsonsplit.Unquote(v), true
			case 'n':
				a.errText, a.errSet = "", false
			default:
				a.mismatched(typeError("error", "a string", v))
			}
		case f == answerMessages:
			switch v[0] {
			case '[':
				if !a.messagesSet {
					*wire = (*wire)[:0]
					a.messagesSet = true
				}
				if err := a.decodeMessages(body, val.Start, wire); err != nil {
					return err
				}
			case 'n': // as if no array had come: nothing left from an earlier one
				clear((*wire)[:cap(*wire)])
				*wire, a.messagesSet = (*wire)[:0], false
			default:
				a.mismatched(typeError("messages", "an array", v))
			}
		}
	}
	return nil
}

// decodeMessages applies the array at body[at] onto *wire element by element, keeping
// what a repeated "messages" key leaves in place, as encoding/json does with a slice.
func (a *popAnswer) decodeMessages(body []byte, at int, wire *[]wireMessage) error {
	w := *wire
	i := 0
	it := jsonsplit.Walk(body, at)
	for el, ok := it.Next(); ok; el, ok = it.Next() {
		if i >= cap(w) {
			w = append(w[:i], wireMessage{})
		} else if i >= len(w) {
			w = w[:i+1]
		}
		end, err := w[i].decode(a, body, el, i)
		if err != nil {
			*wire = w
			return err
		}
		it.SkipTo(end)
		i++
	}
	if i == 0 { // encoding/json starts an empty array afresh
		clear(w[:cap(w)])
	}
	*wire = w[:i]
	return nil
}

// decode applies the element of "messages" at body[at] and returns where it ends; null leaves
// w as it was.
func (w *wireMessage) decode(a *popAnswer, body []byte, at, index int) (end int, err error) {
	switch body[at] {
	case 'n':
		return jsonsplit.SkipValue(body, at), nil
	case '{':
	default:
		end = jsonsplit.SkipValue(body, at)
		a.mismatched(typeError(fmt.Sprintf("messages[%d]", index), "an object", body[at:end]))
		return end, nil
	}
	it := jsonsplit.Walk(body, at)
	for key, val, ok := it.Member(); ok; key, val, ok = it.Member() {
		f := fieldIndex(key.Of(body), messageFields)
		if f < 0 {
			continue
		}
		v := val.Of(body)
		var err error
		switch f {
		case messageData:
			w.data = val
		case messageOffset:
			err = w.offset.read(v)
		case messageAttempt:
			err = w.attempt.read(v)
		default: // a string field
			if v[0] == 'n' {
				continue
			}
			if v[0] != '"' {
				a.mismatched(typeError(fmt.Sprintf("messages[%d].%s", index, messageFields[f]), "a string", v))
				continue
			}
			switch f {
			case messageID:
				w.id = jsonsplit.Unquote(v)
			case messageTransactionID:
				w.transactionID = jsonsplit.Unquote(v)
			case messageTraceID:
				w.traceID = jsonsplit.Unquote(v)
			case messageCreatedAt:
				w.createdAt = val
			default:
				w.shared[f] = val
			}
		}
		if err != nil {
			return 0, err
		}
	}
	return it.End(), nil
}

// messages builds the leased messages; their data share one block copied out of the body.
func (a *popAnswer) messages(body []byte, wire []wireMessage, route string) []*Message {
	msgs := make([]*Message, len(wire))
	backing := make([]Message, len(wire)) // one allocation for the whole batch
	size := 0
	for i := range wire {
		size += wire[i].data.End - wire[i].data.Start
	}
	block := make([]byte, 0, size)
	for i := range wire {
		w := &wire[i]
		m := &backing[i]
		m.ID, m.TransactionID, m.TraceID = w.id, w.transactionID, w.traceID
		m.Queue = a.sharedValue(body, w, sharedQueue)
		m.Partition = a.sharedValue(body, w, sharedPartition)
		m.PartitionID = a.sharedValue(body, w, sharedPartitionID)
		m.LeaseID = a.sharedValue(body, w, sharedLeaseID)
		m.ConsumerGroup = a.sharedValue(body, w, sharedGroup)
		m.Offset, m.DeliveryAttempt = -1, 0
		if w.offset.set {
			m.Offset = w.offset.v
		}
		if w.attempt.set {
			m.DeliveryAttempt = int(w.attempt.v)
		}
		// An unreadable time must not lose a leased batch: it is left zero.
		m.CreatedAt = parseCreatedAt(w.createdAt.Of(body))
		if w.data.End > 0 {
			start := len(block)
			block = append(block, w.data.Of(body)...)
			m.Data = block[start:len(block):len(block)]
		}
		m.route = route
		msgs[i] = m
	}
	return msgs
}

// sharedValue is a message's own value of a shared field, or the answer's when it has none
// or an empty one.
func (a *popAnswer) sharedValue(body []byte, w *wireMessage, f int) string {
	own := w.shared[f].Of(body)
	if len(own) <= 2 { // absent, null or ""
		return a.shared[f].s
	}
	if string(own) == string(a.shared[f].raw) {
		return a.shared[f].s // the usual case: no new string
	}
	return jsonsplit.Unquote(own)
}

// parseCreatedAt reads a quoted timestamp. The broker's own layout, UTC with six fractional
// digits, is read directly; anything else goes through time.Parse(time.RFC3339Nano). An
// absent or unreadable time is the zero time.
func parseCreatedAt(raw []byte) time.Time {
	if t, ok := parseMicrosUTC(raw); ok {
		return t
	}
	var s string
	if len(raw) > 0 {
		s = jsonsplit.Unquote(raw)
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// parseMicrosUTC reads exactly "YYYY-MM-DDTHH:MM:SS.ffffffZ" in quotes, with the range checks
// time.Parse applies; ok is false for anything else.
func parseMicrosUTC(raw []byte) (t time.Time, ok bool) {
	const layout = `"0000-00-00T00:00:00.000000Z"`
	if len(raw) != len(layout) {
		return time.Time{}, false
	}
	for i := 0; i < len(layout); i++ {
		c, l := raw[i], layout[i]
		if l == '0' {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		} else if c != l {
			return time.Time{}, false
		}
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range raw[from:to] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(1, 5), num(6, 8), num(9, 11)
	hour, minute, sec, micros := num(12, 14), num(15, 17), num(18, 20), num(21, 27)
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, micros*1000, time.UTC), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
