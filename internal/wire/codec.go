// Package wire holds the typed request and answer bodies of every broker route, shared by the
// SDK, package admin and the reference broker, and the one JSON codec they are read and written
// with. A struct here is the whole truth about a body: its fields, their JSON names, and which
// of them a 0.15 broker leaves out or spells differently.
//
// Optional members are pointers (or omitzero fields) wherever absent and zero mean different
// things, so that one struct both reads a 0.15 answer and writes one.
package wire

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Lenient are the options every body is read and written with: as encoding/json did, a
// repeated name counts its last value and invalid UTF-8 in a string becomes U+FFFD.
var Lenient = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// written are the options every body is written with: Lenient, a map's members sorted by name,
// and the escapes of a raw value (a payload) kept as they came.
var written = json.JoinOptions(Lenient, json.Deterministic(true), jsontext.PreserveRawStrings(true))

// Marshal encodes v as compact JSON.
func Marshal(v any) ([]byte, error) { return json.Marshal(v, written) }

// Unmarshal decodes data into v. Unknown members are ignored, so a broker may add fields;
// names match exactly.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v, Lenient) }

// KindOf names the JSON type of a raw value for an error message: "an object", "a number", or
// "nothing" when there is no value.
func KindOf(v Value) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Value is a raw JSON value kept as sent (a message payload, an option). Absent is nil; a
// JSON null is the four bytes null.
type Value = jsontext.Value
