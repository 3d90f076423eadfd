// Package wire holds the typed request and answer bodies of every broker route, shared by the
// SDK, package admin and the reference broker, and the one JSON codec they are read and written
// with. A struct here is the whole truth about a body: its fields, their JSON names, and which
// of them a 0.15 broker leaves out or spells differently.
package wire

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Marshal encodes v as compact JSON.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes data into v. Unknown members are ignored, so a broker may add fields;
// names match exactly, duplicates and invalid UTF-8 are refused.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// Value is a raw JSON value kept as sent (a message payload, an option).
type Value = jsontext.Value
