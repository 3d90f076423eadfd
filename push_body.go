package queen

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/wire"
)

// The push path writes each item's JSON once, straight into the request body, and reads the
// answer's results in one pass into the caller's slice: the two bodies are the bulk of what a
// push costs the client. The shapes are wire.PushItem's and wire.PushResult's.

const (
	pushBodyHead = `{"items":[`
	pushBodyTail = `]}`
)

// pushBody is the body of one Push call being written: pushBodyHead, then each item's object,
// separated by commas. It is cut into requests at item boundaries, by the size of each item
// as encoded, so no request is larger than the broker takes.
type pushBody struct {
	buf  []byte
	ends []int // where each item's object ends in buf
	ids  []int // where the transactionId made for an item starts in buf; -1: the item's own
	cut  []byte
}

var pushBodies = sync.Pool{New: func() any { return new(pushBody) }}

func getPushBody() *pushBody {
	p := pushBodies.Get().(*pushBody)
	p.buf = append(p.buf[:0], pushBodyHead...)
	return p
}

func putPushBody(p *pushBody) {
	if cap(p.buf) > 4<<20 || cap(p.cut) > 4<<20 {
		return // do not keep huge bodies alive
	}
	p.ends, p.ids, p.cut = p.ends[:0], p.ids[:0], p.cut[:0]
	pushBodies.Put(p)
}

// add checks and appends item index of the call.
func (p *pushBody) add(name string, index int, queue, partition string, it *PushItem) error {
	if len(p.ends) > 0 {
		p.buf = append(p.buf, ',')
	}
	start := len(p.buf)
	out, idAt, err := appendPushItem(p.buf, name, index, queue, partition, it)
	if err != nil {
		return err
	}
	if idAt >= 0 {
		idAt += start
	}
	p.buf = out
	p.ends, p.ids = append(p.ends, len(out)), append(p.ids, idAt)
	return nil
}

func (p *pushBody) start(i int) int {
	if i == 0 {
		return len(pushBodyHead)
	}
	return p.ends[i-1] + 1
}

// requestLen is how many items from first one request carries.
func (p *pushBody) requestLen(first int) int {
	return requestLen(len(p.ends)-first, maxPushItems, func(i int) int { return p.ends[first+i] - p.start(first+i) + 1 })
}

// request is the body of the request that carries n items from first. The buffer is reused by
// the next call.
func (p *pushBody) request(first, n int) []byte {
	if first == 0 && n == len(p.ends) {
		p.buf = append(p.buf, pushBodyTail...)
		return p.buf
	}
	p.cut = append(p.cut[:0], pushBodyHead...)
	p.cut = append(p.cut, p.buf[p.start(first):p.ends[first+n-1]]...)
	p.cut = append(p.cut, pushBodyTail...)
	return p.cut
}

// transactionID is item i's transactionId: its own, or the one made for it.
func (p *pushBody) transactionID(items []PushItem, i int) string {
	if at := p.ids[i]; at >= 0 {
		return string(p.buf[at : at+idLen])
	}
	return items[i].TransactionID
}

// requestLen is how many of n items, from the first, one push request carries: at most limit,
// and no more than maxPushBytes of them (by size as encoded) unless the first alone is larger.
func requestLen(n, limit int, size func(i int) int) int {
	n = min(n, limit)
	total := 0
	for i := range n {
		total += size(i)
		if total > maxPushBytes && i > 0 {
			return i
		}
	}
	return n
}

// appendPushItem checks item and appends its JSON object to dst: for queue, in the item's own
// Partition, else in partition ("": the broker's Default). The caller has checked queue and
// partition. Field names in errors are name[index].field, or name.field when index < 0. An item
// without a TransactionID gets a new UUIDv7: idAt is where it starts
// in the appended bytes, -1 when the item has its own.
func appendPushItem(dst []byte, name string, index int, queue, partition string, it *PushItem) (out []byte, idAt int, err error) {
	if err := checkPushItem(name, index, it); err != nil {
		return dst, -1, err
	}
	if it.Partition != "" {
		partition = it.Partition
	}
	start := len(dst)
	dst = append(dst, `{"queue":`...)
	dst, _ = jsontext.AppendQuote(dst, queue) // checked: valid UTF-8
	if partition != "" {
		dst = append(dst, `,"partition":`...)
		dst, _ = jsontext.AppendQuote(dst, partition)
	}
	dst = append(dst, `,"payload":`...)
	dst, err = appendPayload(dst, it.Data)
	if err != nil {
		return dst[:start], -1, invalidData(name, index, err)
	}
	dst = append(dst, `,"transactionId":`...)
	idAt = -1
	if it.TransactionID == "" {
		dst = append(dst, '"')
		idAt = len(dst) - start
		dst = appendNewID(dst)
		dst = append(dst, '"')
	} else {
		dst, _ = jsontext.AppendQuote(dst, it.TransactionID)
	}
	if it.TraceID != "" {
		dst = append(dst, `,"traceId":"`...) // a canonical UUID: nothing to escape
		dst = append(dst, it.TraceID...)
		dst = append(dst, '"')
	}
	return append(dst, '}'), idAt, nil
}

// checkPushItem refuses what the broker would refuse in an item, or fail other clients' pushes
// on (a 0.15 broker does on a trace id that is not a canonical UUID), its data apart.
func checkPushItem(name string, index int, it *PushItem) error {
	if it.Partition != "" && names.Problem(it.Partition) != "" {
		return checkNameField(pushField(name, index, "partition"), it.Partition)
	}
	if it.TraceID != "" && !names.IsUUID(it.TraceID) {
		return invalidOption(pushField(name, index, "traceId"), it.TraceID,
			"must be a UUID in canonical form (8-4-4-4-12 hex digits)")
	}
	if !utf8.ValidString(it.TransactionID) {
		return checkText(pushField(name, index, "transactionId"), it.TransactionID)
	}
	return nil
}

// invalidData is the refusal of item index's data.
func invalidData(name string, index int, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrInvalidOption, pushField(name, index, "data"), err)
}

// pushField names a field of item index in errors.
func pushField(name string, index int, field string) string {
	if index < 0 {
		return name + "." + field
	}
	return fmt.Sprintf("%s[%d].%s", name, index, field)
}

// appendPayload appends a PushItem's Data as the payload: raw JSON checked as the broker reads
// it (valid JSON in valid UTF-8, a repeated name allowed) and written compactly with its
// strings' escapes kept, any other value JSON-encoded with encoding/json, and nil as null.
func appendPayload(dst []byte, v any) ([]byte, error) {
	switch d := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case json.RawMessage:
		out, err := jsontext.AppendFormat(dst, d, jsontext.AllowDuplicateNames(true), jsontext.PreserveRawStrings(true))
		if err != nil {
			if !utf8.Valid(d) {
				return dst, errors.New("json.RawMessage is not valid UTF-8")
			}
			return dst, errors.New("json.RawMessage is not valid JSON")
		}
		return out, nil
	case string:
		if !utf8.ValidString(d) {
			return dst, errors.New("string is not valid UTF-8")
		}
	}
	e := jsonEncoders.Get().(*jsonEncoder)
	defer e.put()
	if err := e.enc.Encode(v); err != nil {
		return dst, err
	}
	out := e.buf.Bytes()
	return append(dst, out[:len(out)-1]...), nil // without Encode's newline
}

// jsonEncoder is an encoding/json Encoder into a buffer of its own, reused.
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonEncoders = sync.Pool{New: func() any {
	e := new(jsonEncoder)
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

func (e *jsonEncoder) put() {
	if e.buf.Cap() > 64<<10 {
		return
	}
	e.buf.Reset()
	jsonEncoders.Put(e)
}

// idLen is the length of a UUID in canonical form.
const idLen = 36

// appendNewID appends a new UUIDv7 in canonical form, so ids made in one process sort by
// time; the hex is written straight into dst, with no string made per id.
func appendNewID(dst []byte) []byte {
	id := uuid.Must(uuid.NewV7())
	dst = hex.AppendEncode(dst, id[0:4])
	for _, group := range [][2]int{{4, 6}, {6, 8}, {8, 10}, {10, 16}} {
		dst = append(dst, '-')
		dst = hex.AppendEncode(dst, id[group[0]:group[1]])
	}
	return dst
}

// newID is a new UUIDv7 in canonical form.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// readPushResults reads the answer to a push of n items and appends one result per item to
// dst, matched by position, as a 0.15 broker may renumber the index it sends. idOf(i) is the
// transactionId of item i, for a result without one. An answer that is not an array of n
// results is an *APIError, and dst comes back as it was.
func readPushResults(body *bytes.Buffer, req *request, n int, dst []PushResult, idOf func(i int) string) ([]PushResult, error) {
	if err := objectForArray(bytesTrimSpace(body.Bytes()), req); err != nil {
		return dst, err
	}
	d := pushDecoders.Get().(*pushDecoder)
	defer d.put()
	d.dec.Reset(body, wire.Lenient)
	start := len(dst)
	dst, err := d.decode(dst)
	if err != nil {
		return dst[:start], &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: "answer is not a JSON array: " + err.Error(), NotJSON: true}
	}
	if got := len(dst) - start; got != n {
		return dst[:start], &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: fmt.Sprintf("push answered %d results for %d items", got, n)}
	}
	for i := range n {
		if r := &dst[start+i]; r.TransactionID == "" {
			r.TransactionID = idOf(i)
		}
	}
	return dst, nil
}

// pushDecoder reads push answers. The identifiers of one answer are copied into one string
// that the results share.
type pushDecoder struct {
	dec   *jsontext.Decoder
	text  []byte       // the answer's identifiers, one after the other
	spans []resultText // where each result's identifiers sit in text
	name  []byte
}

// resultText locates one result's identifiers in pushDecoder.text: [start, end) pairs.
type resultText struct{ tx, message, partition [2]int }

var pushDecoders = sync.Pool{New: func() any { return &pushDecoder{dec: jsontext.NewDecoder(new(bytes.Buffer))} }}

// noInput is what a pooled decoder reads until it is reset: it keeps no answer alive.
var noInput = new(bytes.Buffer)

func (d *pushDecoder) put() {
	d.dec.Reset(noInput)
	if cap(d.text) > 1<<20 {
		d.text, d.spans = nil, nil
	}
	d.text, d.spans = d.text[:0], d.spans[:0]
	pushDecoders.Put(d)
}

var errNotResults = errors.New("want an array of result objects")

func (d *pushDecoder) decode(dst []PushResult) ([]PushResult, error) {
	if tok, err := d.dec.ReadToken(); err != nil {
		return dst, err
	} else if tok.Kind() != '[' {
		return dst, errNotResults
	}
	for d.dec.PeekKind() == '{' {
		if _, err := d.dec.ReadToken(); err != nil {
			return dst, err
		}
		r, span := PushResult{Offset: -1}, resultText{}
		for d.dec.PeekKind() == '"' {
			name, err := d.readName()
			if err != nil {
				return dst, err
			}
			switch string(name) {
			case "transaction_id":
				span.tx, err = d.readText()
			case "message_id":
				span.message, err = d.readText()
			case "partition_id":
				span.partition, err = d.readText()
			case "status":
				r.Status, err = d.readStatus()
			case "offset":
				r.Offset, err = d.readOffset()
			default:
				err = d.dec.SkipValue()
			}
			if err != nil {
				return dst, fmt.Errorf("%s: %w", name, err)
			}
		}
		if tok, err := d.dec.ReadToken(); err != nil {
			return dst, err
		} else if tok.Kind() != '}' {
			return dst, errNotResults
		}
		dst = append(dst, r)
		d.spans = append(d.spans, span)
	}
	if tok, err := d.dec.ReadToken(); err != nil {
		return dst, err
	} else if tok.Kind() != ']' {
		return dst, errNotResults
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return dst, errors.New("data after the array")
	}
	text := string(d.text)
	results := dst[len(dst)-len(d.spans):]
	for i, s := range d.spans {
		r := &results[i]
		r.TransactionID, r.MessageID, r.PartitionID = text[s.tx[0]:s.tx[1]], text[s.message[0]:s.message[1]],
			text[s.partition[0]:s.partition[1]]
	}
	return dst, nil
}

// readName reads an object member's name, valid until the next read.
func (d *pushDecoder) readName() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	d.name, err = jsontext.AppendUnquote(d.name[:0], v)
	return d.name, err
}

// readText reads a string (or null: "") into d.text and returns where it sits.
func (d *pushDecoder) readText() ([2]int, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return [2]int{}, err
	}
	start := len(d.text)
	switch v.Kind() {
	case 'n':
	case '"':
		if raw := v[1 : len(v)-1]; bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			d.text = append(d.text, raw...)
		} else {
			d.text, _ = jsontext.AppendUnquote(d.text, v) // invalid UTF-8 becomes U+FFFD, as elsewhere
		}
	default:
		return [2]int{}, errors.New("want a string")
	}
	return [2]int{start, len(d.text)}, nil
}

// readStatus reads a result's status; the usual ones are not copied.
func (d *pushDecoder) readStatus() (string, error) {
	span, err := d.readText()
	if err != nil {
		return "", err
	}
	s := d.text[span[0]:span[1]]
	d.text = d.text[:span[0]]
	switch string(s) {
	case "queued":
		return "queued", nil
	case "duplicate":
		return "duplicate", nil
	case "buffered":
		return "buffered", nil
	case "failed":
		return "failed", nil
	}
	return string(s), nil
}

// readOffset reads a result's offset: an integer, or null (-1: not sent).
func (d *pushDecoder) readOffset() (int64, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return 0, err
	}
	if v.Kind() == 'n' {
		return -1, nil
	}
	if v.Kind() != '0' {
		return 0, errors.New("want an integer")
	}
	if len(v) > 18 { // may not fit the loop below
		return strconv.ParseInt(string(v), 10, 64)
	}
	var n int64
	digits := v
	if digits[0] == '-' {
		digits = digits[1:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errors.New("want an integer")
		}
		n = n*10 + int64(c-'0')
	}
	if v[0] == '-' {
		n = -n
	}
	return n, nil
}
