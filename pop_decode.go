package queen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/queenmq/queen-go/internal/wire"
)

// Reading a pop answer in one pass: the answer is what wire.PopAnswer describes, read member
// by member, straight into the leased messages. Every string of the answer is unquoted into
// one buffer that becomes one string for the whole batch, the members a batch repeats (its
// partition, lease, queue and group) kept once, and each message's data is copied into a
// slice of its own, so that a batch costs a handful of allocations plus one per message
// however many fields its messages carry. A message's strings share that one string: keeping
// one of them keeps the batch's identifiers, a few dozen bytes per message.

// popReaders are reused across pops: their decoder and buffers keep their capacity.
var popReaders = sync.Pool{New: func() any { return new(popReader) }}

// span is a string of the answer: text[start:end] of the reader that read it.
type span struct{ start, end int }

func (s span) empty() bool { return s.start == s.end }

// popTop is the top level of a pop answer.
type popTop struct {
	success, successSet     bool
	errSet                  bool // error is a string, not null or absent
	err                     span
	queue, partition, group span
	partitionID, leaseID    span
	messagesSet             bool // messages is an array, not null or absent
}

// popEntry is one element of messages.
type popEntry struct {
	id, txn, trace, createdAt     span
	partitionID, partition, lease span
	group, queue                  span
	data                          []byte
	offset, deliveryAttempt       int64
	offsetSet, deliveryAttemptSet bool
}

// popReader reads one pop answer at a time.
type popReader struct {
	dec     jsontext.Decoder
	none    bytes.Reader // what dec reads between answers: nothing
	text    []byte       // the answer's strings, unquoted, one after the other
	name    []byte       // the member name being read, unquoted
	top     popTop
	entries []popEntry
}

// wrongKind says what a member held instead of what the answer's shape wants.
func wrongKind(member string, v jsontext.Value, want string) error {
	return fmt.Errorf("member %q is %s, want %s", member, wire.KindOf(v), want)
}

// read decodes body into r.top and r.entries.
func (r *popReader) read(body *bytes.Buffer) error {
	r.text, r.entries, r.top = r.text[:0], r.entries[:0], popTop{}
	r.dec.Reset(body, wire.Lenient)
	defer r.dec.Reset(&r.none) // let go of the body
	if opened, err := r.open('{', "", "an object"); !opened {
		if err != nil {
			return err
		}
		return r.end() // null
	}
	for r.dec.PeekKind() != '}' {
		if err := r.member(); err != nil {
			return err
		}
		if err := r.topMember(); err != nil {
			return err
		}
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return err
	}
	return r.end()
}

// end checks that nothing follows the answer.
func (r *popReader) end() error { return answerEnd(&r.dec) }

// answerEnd checks that nothing follows the answer dec has read.
func answerEnd(dec *jsontext.Decoder) error {
	switch _, err := dec.ReadToken(); {
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("data after the answer")
	default:
		return err
	}
}

// open reads the start of a value that should open with kind ('{' or '['), of member ("" for
// the answer itself): the opening token, reporting true, or a null, reporting false. Any other
// value is an error saying it is not want.
func (r *popReader) open(kind jsontext.Kind, member, want string) (opened bool, err error) {
	switch r.dec.PeekKind() {
	case kind:
		_, err := r.dec.ReadToken()
		return err == nil, err
	case 'n':
		_, err := r.dec.ReadValue()
		return false, err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return false, err
	}
	if member == "" {
		return false, fmt.Errorf("the answer is %s, want %s", wire.KindOf(v), want)
	}
	return false, wrongKind(member, v, want)
}

// member reads the next member name, unquoted into r.name (a switch on string(r.name) does
// not allocate).
func (r *popReader) member() error {
	v, err := r.dec.ReadValue()
	if err != nil {
		return err
	}
	r.name = appendUnquoted(r.name[:0], v)
	return nil
}

// appendUnquoted appends the string literal v, unquoted, to dst: invalid UTF-8 becomes
// U+FFFD, as the codec reads it.
func appendUnquoted(dst []byte, v jsontext.Value) []byte {
	plain := true
	for _, c := range v {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return append(dst, v[1:len(v)-1]...)
	}
	dst, _ = jsontext.AppendUnquote(dst, v) // the decoder checked the rest of its syntax
	return dst
}

func (r *popReader) topMember() error {
	t := &r.top
	var err error
	switch string(r.name) {
	case "success":
		t.success, t.successSet, err = r.boolean("success")
	case "error":
		t.err, t.errSet, err = r.str("error", true)
	case "queue":
		t.queue, _, err = r.str("queue", false)
	case "partition":
		t.partition, _, err = r.str("partition", false)
	case "partitionId":
		t.partitionID, _, err = r.str("partitionId", true)
	case "leaseId":
		t.leaseID, _, err = r.str("leaseId", true)
	case "consumerGroup":
		t.group, _, err = r.str("consumerGroup", false)
	case "partitionsClaimed":
		_, _, err = r.integer("partitionsClaimed", strconv.IntSize)
	case "paused":
		_, _, err = r.boolean("paused")
	case "messages":
		err = r.messages()
	default:
		err = r.dec.SkipValue()
	}
	return err
}

// messages reads the messages array: null leaves it unset.
func (r *popReader) messages() error {
	r.entries = r.entries[:0] // a repeated member counts its last value
	opened, err := r.open('[', "messages", "an array")
	r.top.messagesSet = opened
	if !opened {
		return err
	}
	for r.dec.PeekKind() != ']' {
		if err := r.entry(); err != nil {
			return err
		}
	}
	_, err = r.dec.ReadToken()
	return err
}

// entry reads one element of messages: an object, or null for a message with nothing set.
func (r *popReader) entry() error {
	r.entries = append(r.entries, popEntry{})
	e := &r.entries[len(r.entries)-1]
	if opened, err := r.open('{', "messages", "an array of objects"); !opened {
		return err
	}
	var prev *popEntry
	if n := len(r.entries); n > 1 {
		prev = &r.entries[n-2]
	}
	for r.dec.PeekKind() != '}' {
		if err := r.member(); err != nil {
			return err
		}
		var err error
		switch string(r.name) {
		case "id":
			e.id, _, err = r.str("id", false)
		case "transactionId":
			e.txn, _, err = r.str("transactionId", false)
		case "traceId":
			e.trace, _, err = r.str("traceId", true)
		case "data":
			err = r.data(e)
		case "producerSub":
			_, _, err = r.str("producerSub", true)
		case "createdAt":
			e.createdAt, _, err = r.str("createdAt", false)
		case "partitionId":
			e.partitionID, _, err = r.str("partitionId", false, r.top.partitionID, prevSpan(prev, func(p *popEntry) span { return p.partitionID }))
		case "partition":
			e.partition, _, err = r.str("partition", false, r.top.partition, prevSpan(prev, func(p *popEntry) span { return p.partition }))
		case "leaseId":
			e.lease, _, err = r.str("leaseId", false, r.top.leaseID, prevSpan(prev, func(p *popEntry) span { return p.lease }))
		case "consumerGroup":
			e.group, _, err = r.str("consumerGroup", false, r.top.group, prevSpan(prev, func(p *popEntry) span { return p.group }))
		case "queue":
			e.queue, _, err = r.str("queue", false, r.top.queue, prevSpan(prev, func(p *popEntry) span { return p.queue }))
		case "offset":
			e.offset, e.offsetSet, err = r.integer("offset", 64)
		case "deliveryAttempt":
			e.deliveryAttempt, e.deliveryAttemptSet, err = r.integer("deliveryAttempt", strconv.IntSize)
		default:
			err = r.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := r.dec.ReadToken()
	return err
}

// prevSpan is one span of the previous entry, or none.
func prevSpan(p *popEntry, f func(*popEntry) span) span {
	if p == nil {
		return span{}
	}
	return f(p)
}

// str reads a string member into r.text. With nullable, null is (span{}, false); else null
// is the empty string, as for a plain string field. A value equal to one of same is not
// stored again: that span is returned.
func (r *popReader) str(member string, nullable bool, same ...span) (span, bool, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return span{}, false, err
	}
	switch v.Kind() {
	case '"':
	case 'n':
		return span{}, false, nil
	default:
		if nullable {
			return span{}, false, wrongKind(member, v, "a string or null")
		}
		return span{}, false, wrongKind(member, v, "a string")
	}
	start := len(r.text)
	r.text = appendUnquoted(r.text, v)
	got := r.text[start:]
	for _, s := range same {
		if !s.empty() && bytes.Equal(r.text[s.start:s.end], got) {
			r.text = r.text[:start]
			return s, true, nil
		}
	}
	return span{start, len(r.text)}, true, nil
}

// boolean reads true, false or null (false, unset).
func (r *popReader) boolean(member string) (value, set bool, err error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return false, false, err
	}
	switch v.Kind() {
	case 't':
		return true, true, nil
	case 'f':
		return false, true, nil
	case 'n':
		return false, false, nil
	}
	return false, false, wrongKind(member, v, "a boolean")
}

// integer reads an integer of bits bits, or null (unset).
func (r *popReader) integer(member string, bits int) (int64, bool, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return 0, false, err
	}
	switch v.Kind() {
	case '0':
	case 'n':
		return 0, false, nil
	default:
		return 0, false, wrongKind(member, v, "a number")
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		return 0, false, fmt.Errorf("member %q: %s is not an integer", member, v)
	}
	return n, true, nil
}

// data copies a message's payload as sent.
func (r *popReader) data(e *popEntry) error {
	v, err := r.dec.ReadValue()
	if err != nil {
		return err
	}
	e.data = append([]byte(nil), v...)
	return nil
}

// decodePop reads a 2xx pop body: messages, one of a 0.15 broker's ways to say "nothing to
// deliver" (an empty result), or a 0.15 database failure answered as 200 (an *APIError).
func decodePop(body []byte, path, route string) ([]*Message, error) {
	return decodePopBuffer(bytes.NewBuffer(body), path, route)
}

// decodePopBuffer is decodePop of the body in buf, which it consumes.
func decodePopBuffer(buf *bytes.Buffer, path, route string) ([]*Message, error) {
	r := popReaders.Get().(*popReader)
	defer popReaders.Put(r)
	if err := r.read(buf); err != nil {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path,
			Message: "pop answer is not a JSON object: " + err.Error(), NotJSON: true}
	}
	t := &r.top
	if t.successSet && !t.success && t.errSet && !wire.EmptyPopErrors[string(r.text[t.err.start:t.err.end])] {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path,
			Message: string(r.text[t.err.start:t.err.end])}
	}
	if !t.messagesSet {
		msg := "pop answer has no messages"
		if t.errSet {
			msg = string(r.text[t.err.start:t.err.end])
		}
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: msg}
	}
	text := string(r.text) // one string for the batch
	at := func(s span) string { return text[s.start:s.end] }
	msgs := make([]*Message, len(r.entries))
	backing := make([]Message, len(r.entries)) // one allocation for the whole batch
	for i := range r.entries {
		e, m := &r.entries[i], &backing[i]
		m.ID, m.TransactionID, m.TraceID = at(e.id), at(e.txn), at(e.trace)
		// A message carries its own queue, partition, lease and group, or leaves them to the answer.
		m.Queue = at(firstSpan(e.queue, t.queue))
		m.Partition = at(firstSpan(e.partition, t.partition))
		m.PartitionID = at(firstSpan(e.partitionID, t.partitionID))
		m.LeaseID = at(firstSpan(e.lease, t.leaseID))
		m.ConsumerGroup = at(firstSpan(e.group, t.group))
		m.Offset, m.DeliveryAttempt = -1, 0 // a 0.15 broker sends neither: unknown, not 0
		if e.offsetSet {
			m.Offset = e.offset
		}
		if e.deliveryAttemptSet {
			m.DeliveryAttempt = int(e.deliveryAttempt)
		}
		// An unreadable time must not lose a leased batch: it is left zero.
		m.CreatedAt, _ = time.Parse(time.RFC3339Nano, at(e.createdAt))
		m.Data = e.data
		e.data = nil // the message owns it now
		m.route = route
		msgs[i] = m
	}
	return msgs, nil
}

// firstSpan is a unless it is empty, else b.
func firstSpan(a, b span) span {
	if !a.empty() {
		return a
	}
	return b
}
