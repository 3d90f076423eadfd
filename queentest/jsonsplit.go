package queentest

import (
	"encoding/json"
	"unicode/utf8"
)

// Request bodies are validated once with json.Valid, then split into raw members by the
// functions below, which therefore assume well-formed JSON. One validation pass plus one
// split is several times cheaper than encoding/json's reflective decoding into maps, which
// matters on the push and batch-ack paths.

// field is one member of a JSON object; val aliases the request body.
type field struct {
	key string
	val json.RawMessage
}

// splitObject splits a valid JSON object into its members, in order.
func splitObject(raw []byte) object {
	fields := make(object, 0, 8)
	i := skipSpace(raw, 1) // past '{'
	for i < len(raw) && raw[i] != '}' {
		keyEnd := skipString(raw, i)
		key := unquote(raw[i:keyEnd])
		i = skipSpace(raw, keyEnd)
		i = skipSpace(raw, i+1) // past ':'
		valEnd := skipValue(raw, i)
		fields = append(fields, field{key: key, val: raw[i:valEnd:valEnd]})
		i = skipSpace(raw, valEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return fields
}

// splitArray splits a valid JSON array into its elements.
func splitArray(raw []byte) []json.RawMessage {
	var elems []json.RawMessage
	i := skipSpace(raw, 1) // past '['
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		elems = append(elems, raw[i:end:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return elems
}

func skipSpace(raw []byte, i int) int {
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

// skipValue returns the index just past the value starting at raw[i].
func skipValue(raw []byte, i int) int {
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

// unquote decodes a valid JSON string; strings without escapes take the fast path.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain || (utf8.Valid(inner) && !containsByte(inner, '\\')) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid by construction; invalid UTF-8 becomes U+FFFD as in encoding/json
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
