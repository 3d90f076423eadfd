package queen

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/queenmq/queen-go/internal/wire"
)

// Reading an ack answer in one pass: the answer is an array of what wire.AckOutcome describes,
// one per item, read member by member without reflection, since a consume loop reads one for
// every batch it completes. It reads what the codec reads: the same values, and an error for
// every answer the codec refuses.

// ackReaders are reused across acks: their decoder keeps its buffers.
var ackReaders = sync.Pool{New: func() any { return new(ackReader) }}

// ackReader reads one ack answer at a time.
type ackReader struct {
	dec  jsontext.Decoder
	none bytes.Reader // what dec reads between answers: nothing
	name []byte       // the member name being read, unquoted
	text []byte       // an error's text, unquoted
}

// readAckOutcomes reads body, an ack answer, appending its outcomes to out.
func readAckOutcomes(body []byte, out []wire.AckOutcome) ([]wire.AckOutcome, error) {
	r := ackReaders.Get().(*ackReader)
	defer ackReaders.Put(r)
	r.dec.Reset(bytes.NewBuffer(body), wire.Lenient) // read in place, without a copy
	defer r.dec.Reset(&r.none)                       // let go of the body
	out, err := r.read(out)
	if err != nil {
		return nil, err
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *ackReader) read(out []wire.AckOutcome) ([]wire.AckOutcome, error) {
	switch r.dec.PeekKind() {
	case 'n':
		_, err := r.dec.ReadValue()
		return out, err
	case '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, err
		}
	default:
		return nil, r.notA("the answer", "an array")
	}
	for {
		switch r.dec.PeekKind() {
		case ']':
			_, err := r.dec.ReadToken()
			return out, err
		case 'n': // a null result is a zero one
			if _, err := r.dec.ReadValue(); err != nil {
				return nil, err
			}
			out = append(out, wire.AckOutcome{})
		case '{':
			var o wire.AckOutcome
			if err := r.outcome(&o); err != nil {
				return nil, err
			}
			out = append(out, o)
		default:
			return nil, r.notA("a result", "an object")
		}
	}
}

// outcome reads one result object into o; members other than the outcome's are skipped.
func (r *ackReader) outcome(o *wire.AckOutcome) error {
	if _, err := r.dec.ReadToken(); err != nil { // {
		return err
	}
	for r.dec.PeekKind() == '"' {
		v, err := r.dec.ReadValue()
		if err != nil {
			return err
		}
		r.name = appendUnquoted(r.name[:0], v)
		switch string(r.name) {
		case "success":
			err = r.boolean(&o.Success)
		case "leaseReleased":
			err = r.boolean(&o.LeaseReleased)
		case "dlq":
			err = r.boolean(&o.DLQ)
		case "error":
			err = r.errorText(&o.Error)
		default:
			err = r.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := r.dec.ReadToken() // }, or the syntax error where it should be
	return err
}

// boolean reads a boolean member; null is false.
func (r *ackReader) boolean(dst *bool) error {
	switch k := r.dec.PeekKind(); k {
	case 't', 'f', 'n':
		tok, err := r.dec.ReadToken()
		*dst = err == nil && k != 'n' && tok.Bool()
		return err
	default:
		return r.notA("member "+strconv.Quote(string(r.name)), "a boolean")
	}
}

// errorText reads the error member: a string, or null for none.
func (r *ackReader) errorText(dst **string) error {
	switch r.dec.PeekKind() {
	case 'n':
		_, err := r.dec.ReadValue()
		*dst = nil
		return err
	case '"':
		v, err := r.dec.ReadValue()
		if err != nil {
			return err
		}
		r.text = appendUnquoted(r.text[:0], v)
		s := string(r.text)
		*dst = &s
		return nil
	default:
		return r.notA(`member "error"`, "a string or null")
	}
}

// notA is the error for the next value, where want was expected, or the decoder's own error
// when there is no value to read.
func (r *ackReader) notA(what, want string) error {
	v, err := r.dec.ReadValue()
	if err != nil {
		return err
	}
	return fmt.Errorf("%s is %s, want %s", what, wire.KindOf(v), want)
}

// end checks that nothing follows the answer.
func (r *ackReader) end() error { return answerEnd(&r.dec) }
