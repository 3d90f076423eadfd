// Package jsonsplit splits JSON that json.Valid accepted into raw members and elements.
//
// One validation pass plus one split is several times cheaper than encoding/json's reflective
// decoding, which matters on the broker's push and ack paths and on the client's pop path.
// Every function here assumes well-formed JSON: on anything else its result is unspecified.
package jsonsplit

import (
	"encoding/json"
	"unicode/utf8"
)

// Field is one member of a JSON object; Val aliases the input.
type Field struct {
	Key string
	Val json.RawMessage
}

// Span is where a value lies in the input: raw[Start:End].
type Span struct{ Start, End int }

// Of returns the spanned bytes, capped so that an append cannot overwrite what follows.
func (s Span) Of(raw []byte) []byte { return raw[s.Start:s.End:s.End] }

// Iter walks the members of an object, or the elements of an array, by position and without
// allocating. Positions index the whole input, so nested values can be walked in place.
type Iter struct {
	raw []byte
	i   int
}

// Walk starts an Iter over the object or array that begins at raw[at] ('{' or '[').
func Walk(raw []byte, at int) Iter { return Iter{raw: raw, i: SkipSpace(raw, at+1)} }

// Member returns the next member's key, still quoted, and its value; ok is false past the last.
func (it *Iter) Member() (key, val Span, ok bool) {
	raw, i := it.raw, it.i
	if i >= len(raw) || raw[i] == '}' {
		return Span{}, Span{}, false
	}
	key = Span{i, skipString(raw, i)}
	i = SkipSpace(raw, key.End)
	i = SkipSpace(raw, i+1) // past ':'
	val = Span{i, SkipValue(raw, i)}
	it.i = it.next(val.End)
	return key, val, true
}

// Element returns the next element of an array; ok is false past the last.
func (it *Iter) Element() (val Span, ok bool) {
	raw, i := it.raw, it.i
	if i >= len(raw) || raw[i] == ']' {
		return Span{}, false
	}
	val = Span{i, SkipValue(raw, i)}
	it.i = it.next(val.End)
	return val, true
}

// Next returns where the next element starts without reading it, so that the caller can walk
// it in place and then call SkipTo; ok is false past the last element.
func (it *Iter) Next() (at int, ok bool) {
	if it.i >= len(it.raw) || it.raw[it.i] == ']' {
		return 0, false
	}
	return it.i, true
}

// SkipTo moves past an element the caller read itself, which ended at end.
func (it *Iter) SkipTo(end int) { it.i = it.next(end) }

// End returns the index just past the closing '}' or ']', once Member or Element or Next said
// there was nothing more.
func (it *Iter) End() int { return it.i + 1 }

// next moves past the separator that follows a value.
func (it *Iter) next(i int) int {
	i = SkipSpace(it.raw, i)
	if i < len(it.raw) && it.raw[i] == ',' {
		i = SkipSpace(it.raw, i+1)
	}
	return i
}

// SplitObject splits a valid JSON object into its members, in order.
func SplitObject(raw []byte) []Field {
	fields := make([]Field, 0, 8)
	it := Walk(raw, 0)
	for key, val, ok := it.Member(); ok; key, val, ok = it.Member() {
		fields = append(fields, Field{Key: Unquote(key.Of(raw)), Val: val.Of(raw)})
	}
	return fields
}

// SplitArray splits a valid JSON array into its elements.
func SplitArray(raw []byte) []json.RawMessage {
	var elems []json.RawMessage
	it := Walk(raw, 0)
	for val, ok := it.Element(); ok; val, ok = it.Element() {
		elems = append(elems, val.Of(raw))
	}
	return elems
}

// SkipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func SkipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at raw[i] == '"'.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// SkipValue returns the index just past the value starting at raw[i].
func SkipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				i = skipString(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default: // number, true, false, null
		for ; i < len(raw); i++ {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// Verbatim reports whether a valid JSON string decodes to the bytes between its quotes: it
// has no escape and is valid UTF-8.
func Verbatim(raw []byte) bool {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			return utf8.Valid(inner) && !containsByte(inner, '\\')
		}
	}
	return true
}

// Unquote decodes a valid JSON string; strings without escapes take the fast path. Invalid
// UTF-8 becomes U+FFFD, as in encoding/json.
func Unquote(raw []byte) string {
	if Verbatim(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid by construction
	return s
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}
