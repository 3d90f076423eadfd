package refserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/queenmq/queen-go/internal/wire"
)

// maxBodyBytes caps a request body; a push of 10,000 one-kilobyte messages fits with room.
const maxBodyBytes = 32 << 20

// errBodyTooLarge is answered with 413.
var errBodyTooLarge = errors.New("request body too large")

// presizeBytes bounds the buffer a body is first read into, sized for the Content-Length it
// announces: a body read into a buffer of the right size is not copied as the buffer grows,
// and a connection that announces a large body and sends none holds little memory.
const presizeBytes = 64 << 10

// readBody reads the whole request body under maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// Room for the end's read too, which ReadFrom makes before each read.
	size := int(min(max(r.ContentLength, 0), presizeBytes)) + bytes.MinRead
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge
		}
		return nil, badRequest("reading request body: %v", err)
	}
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	return body, nil
}

// readObject reads a request body that must be a JSON object.
func readObject(w http.ResponseWriter, r *http.Request) (object, error) {
	o, _, err := readObjectSplitting(w, r, "")
	return o, err
}

// readObjectSplitting is readObject for a body whose member name is an array the handler
// splits into its elements (a push's items, say): they come back too, split in the pass that
// checks the body, so that a big array is read once rather than twice. They are nil unless
// the member's value (its last, when repeated) is an array.
func readObjectSplitting(w http.ResponseWriter, r *http.Request, name string) (object, []element, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, nil, err
	}
	return decodeObjectSplitting(body, name)
}

// object is a JSON object split into raw members, so a field's absence, a null and a value
// of the wrong JSON type can be told apart (a null counts as absent). Its values alias
// the request body: copy what outlives the request.
type object []member

// member is one name and its raw value.
type member struct {
	Key string
	Val wire.Value
}

// decoders are reused: a push splits one object per item.
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// withDecoder runs read on a pooled decoder over raw. Reading from a *bytes.Buffer, the
// decoder works on raw in place, without copying it.
func withDecoder(raw wire.Value, read func(dec *jsontext.Decoder)) {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(bytes.NewBuffer(raw), wire.Lenient)
	read(dec)
	dec.Reset(bytes.NewBuffer(nil)) // drop raw
	decoders.Put(dec)
}

// validate reports the first syntax error of a body, which must hold exactly one JSON value.
func validate(body wire.Value) (err error) {
	withDecoder(body, func(dec *jsontext.Decoder) {
		if err = dec.SkipValue(); err == nil {
			err = atEnd(dec)
		}
	})
	return err
}

// atEnd reports what follows the value the decoder has read, if anything does.
func atEnd(dec *jsontext.Decoder) error {
	switch _, err := dec.ReadToken(); err {
	case io.EOF:
		return nil
	case nil:
		return errors.New("invalid data after top-level value")
	default:
		return err
	}
}

// splitObject splits a validated JSON object into its members.
func splitObject(raw wire.Value) object {
	o, _, _ := splitCheckedObject(raw, "")
	return o
}

// splitCheckedObject splits a body that starts with '{' into its members, checking its syntax
// in the same pass: it reports the first syntax error of a body that is not exactly one JSON
// object. The member named arrayName, when it is an array, is split into its elements too.
func splitCheckedObject(raw wire.Value, arrayName string) (o object, elems []element, err error) {
	withDecoder(raw, func(dec *jsontext.Decoder) {
		if _, err = dec.ReadToken(); err != nil { // {
			return
		}
		if o, elems, err = readMembers(dec, raw, arrayName); err == nil {
			err = atEnd(dec)
		}
	})
	return o, elems, err
}

// readMembers reads an object's members up to and including its closing brace, reporting the
// first syntax error. The member named arrayName ("" for none), when it is an array, is split
// into its elements as it is read; a repeated member counts its last value.
func readMembers(dec *jsontext.Decoder, raw wire.Value, arrayName string) (object, []element, error) {
	var o object
	var elems []element
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, nil, err
		}
		key := name.String() // before the next read voids the token
		splits := arrayName != "" && key == arrayName
		if splits {
			elems = nil
		}
		var val wire.Value
		if splits && dec.PeekKind() == '[' {
			if _, err := dec.ReadToken(); err != nil {
				return nil, nil, err
			}
			start := dec.InputOffset() - 1
			if elems, err = readElements(dec, raw); err != nil {
				return nil, nil, err
			}
			val = raw[start:dec.InputOffset()]
		} else if val, err = dec.ReadValue(); err != nil {
			return nil, nil, err
		}
		end := dec.InputOffset()
		o = append(o, member{Key: key, Val: raw[end-int64(len(val)) : end : end]})
	}
	if _, err := dec.ReadToken(); err != nil { // }, or the syntax error where it should be
		return nil, nil, err
	}
	return o, elems, nil
}

// element is one element of an array: its raw value, and its members when it is an object.
type element struct {
	raw     wire.Value
	members object
}

// isObject reports whether the element is a JSON object.
func (e element) isObject() bool { return e.raw[0] == '{' }

// splitArray splits a validated JSON array into its elements, which alias raw. The members
// of an object element are split in the same pass.
func splitArray(raw wire.Value) (elems []element) {
	withDecoder(raw, func(dec *jsontext.Decoder) {
		_, _ = dec.ReadToken()            // [
		elems, _ = readElements(dec, raw) // raw is validated
	})
	return elems
}

// readElements reads an array's elements, after its opening bracket, up to and including its
// closing one, reporting the first syntax error. The members of an object element are split
// as it is read.
func readElements(dec *jsontext.Decoder, raw wire.Value) ([]element, error) {
	var elems []element
	for {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			return elems, err
		case '{':
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
			start := dec.InputOffset() - 1
			members, _, err := readMembers(dec, raw, "")
			if err != nil {
				return nil, err
			}
			end := dec.InputOffset()
			elems = append(elems, element{raw: raw[start:end:end], members: members})
		default: // another value, or the syntax error there is instead
			val, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			end := dec.InputOffset()
			elems = append(elems, element{raw: raw[end-int64(len(val)) : end : end]})
		}
	}
}

// get returns a member's raw value; a repeated key counts its last value, as in encoding/json.
func (o object) get(name string) (wire.Value, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == name {
			return o[i].Val, true
		}
	}
	return nil, false
}

// raw returns a member's raw value, nil when absent.
func (o object) raw(name string) wire.Value {
	v, _ := o.get(name)
	return v
}

// toMap returns the members as a map of copies.
func (o object) toMap() map[string][]byte {
	m := make(map[string][]byte, len(o))
	for _, f := range o {
		m[f.Key] = bytes.Clone(f.Val)
	}
	return m
}

// badRequestError is a malformed request: the handler answers 400 with its text.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &badRequestError{msg: fmt.Sprintf(format, args...)}
}

// decodeObject parses a required JSON object body.
func decodeObject(body []byte) (object, error) {
	o, _, err := decodeObjectSplitting(body, "")
	return o, err
}

// decodeObjectSplitting parses a required JSON object body, splitting the array member name
// as readObjectSplitting does.
func decodeObjectSplitting(body []byte, name string) (object, []element, error) {
	trimmed := trimJSONSpace(body)
	if len(trimmed) == 0 {
		return nil, nil, badRequest("Empty request body")
	}
	if trimmed[0] != '{' {
		if err := validate(trimmed); err != nil {
			return nil, nil, badRequest("Invalid JSON: %v", err)
		}
		return nil, nil, badRequest("request body must be a JSON object, got %s", wire.KindOf(trimmed))
	}
	o, elems, err := splitCheckedObject(trimmed, name) // one pass both checks and splits the body
	if err != nil {
		return nil, nil, badRequest("Invalid JSON: %v", err)
	}
	return o, elems, nil
}

// trimJSONSpace trims JSON's four whitespace bytes, and nothing else.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// asObject splits a raw value (from a validated body) that must be a JSON object; what
// names it in the error.
func asObject(raw wire.Value, what string) (object, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, badRequest("%s must be an object, got %s", what, wire.KindOf(raw))
	}
	return splitObject(raw), nil
}

// present reports whether the field is sent with a value other than null.
func (o object) present(name string) bool {
	raw, ok := o.get(name)
	return ok && !isNull(raw)
}

func isNull(raw wire.Value) bool { return len(raw) == 4 && string(raw) == "null" }

// str returns a string field; absent and null give "" and ok false.
func (o object) str(name string) (s string, ok bool, err error) {
	return rawString(o.raw(name), name)
}

func rawString(raw wire.Value, name string) (s string, ok bool, err error) {
	if len(raw) == 0 || isNull(raw) {
		return "", false, nil
	}
	if raw[0] != '"' {
		return "", false, badRequest("%s must be a string, got %s", name, clip(raw))
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true, nil // no escapes: the usual name or id
	}
	unquoted, _ := jsontext.AppendUnquote(nil, raw) // validated, so it unquotes
	return string(unquoted), true, nil
}

// integer returns an integer field; a fraction, an exponent or a non-number is refused.
func (o object) integer(name string) (n int64, ok bool, err error) {
	raw := o.raw(name)
	if len(raw) == 0 || isNull(raw) {
		return 0, false, nil
	}
	n, ok = parseInteger(string(raw)) // JSON's integer literals are a query's integers too
	if !ok {
		return 0, false, badRequest("%s must be an integer, got %s", name, clip(raw))
	}
	return n, true, nil
}

// boolean returns a boolean field.
func (o object) boolean(name string) (b bool, ok bool, err error) {
	raw := o.raw(name)
	if len(raw) == 0 || isNull(raw) {
		return false, false, nil
	}
	switch string(raw) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, badRequest("%s must be a boolean, got %s", name, clip(raw))
}

// timestamp returns an RFC 3339 time field, with or without fractions, Z or an offset.
func (o object) timestamp(name string) (t time.Time, ok bool, err error) {
	s, ok, err := o.str(name)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	t, err = parseTime(s)
	if err != nil {
		return time.Time{}, false, badRequest("%s must be an RFC 3339 timestamp, got %q", name, s)
	}
	return t, true, nil
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// clip shortens a raw value quoted in an error message.
func clip(raw wire.Value) string {
	const max = 64
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}
