package queen

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/queenmq/queen-go/internal/jsonsplit"
)

// Ack answers are read like pop answers (see pop_decode.go): as decodeArray would read them
// into a slice of {success, error, dlq, leaseReleased}, in one validation pass and one walk.

var ackResultFields = []string{"success", "error", "dlq", "leaseReleased"}

const (
	ackSuccess = iota
	ackError
	ackDLQ
	ackLeaseReleased
)

// decodeAckResults applies the answer's array onto results by position and returns how many
// results the broker sent; those past len(results) are read and dropped.
func decodeAckResults(body []byte, req *request, results []AckResult) (int, error) {
	trimmed := bytesTrimSpace(body)
	if err := objectForArray(trimmed, req); err != nil {
		return 0, err
	}
	if !json.Valid(trimmed) {
		var v struct{}
		return 0, notJSONArray(req, json.Unmarshal(trimmed, &v)) // encoding/json's syntax error
	}
	switch trimmed[0] {
	case 'n':
		return 0, nil // null: no results
	case '[':
	default:
		return 0, notJSONArray(req, typeError("answer", "an array", trimmed))
	}
	// As in encoding/json, a value of the wrong type fails the answer only once all is read.
	var mismatch error
	n := 0
	it := jsonsplit.Walk(trimmed, 0)
	for at, ok := it.Next(); ok; at, ok = it.Next() {
		var r AckResult
		end, err := readAckResult(trimmed, at, n, &r)
		if err != nil && mismatch == nil {
			mismatch = err
		}
		it.SkipTo(end)
		if n < len(results) {
			results[n] = r
		}
		n++
	}
	if mismatch != nil {
		return 0, notJSONArray(req, mismatch)
	}
	return n, nil
}

// readAckResult applies the element at body[at] onto r and returns where it ends; null leaves
// r as it was.
func readAckResult(body []byte, at, index int, r *AckResult) (end int, mismatch error) {
	switch body[at] {
	case 'n':
		return jsonsplit.SkipValue(body, at), nil
	case '{':
	default:
		end = jsonsplit.SkipValue(body, at)
		return end, typeError(fmt.Sprintf("[%d]", index), "an object", body[at:end])
	}
	it := jsonsplit.Walk(body, at)
	for key, val, ok := it.Member(); ok; key, val, ok = it.Member() {
		f := fieldIndex(key.Of(body), ackResultFields)
		if f < 0 {
			continue
		}
		v := val.Of(body)
		if v[0] == 'n' {
			continue
		}
		if f == ackError {
			if v[0] != '"' {
				mismatch = cmp.Or(mismatch, typeError(fmt.Sprintf("[%d].error", index), "a string", v))
				continue
			}
			r.Error = jsonsplit.Unquote(v)
			continue
		}
		if v[0] != 't' && v[0] != 'f' {
			mismatch = cmp.Or(mismatch, typeError(fmt.Sprintf("[%d].%s", index, ackResultFields[f]), "a bool", v))
			continue
		}
		b := v[0] == 't'
		switch f {
		case ackSuccess:
			r.Success = b
		case ackDLQ:
			r.DLQ = b
		case ackLeaseReleased:
			r.LeaseReleased = b
		}
	}
	return it.End(), mismatch
}
