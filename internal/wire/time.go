package wire

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// TimeLayout is the written timestamp: RFC 3339 UTC with Z and exactly six fractional digits.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on the wire. It is written in TimeLayout and read from any RFC 3339 form
// (0.15 sends milliseconds, the reference broker microseconds, clients may send an offset).
// A JSON null reads as the zero time.
type Time struct{ time.Time }

// At wraps t.
func At(t time.Time) Time { return Time{t} }

// AtOrNil is a nullable timestamp: nil for the zero time.
func AtOrNil(t time.Time) *Time {
	if t.IsZero() {
		return nil
	}
	return &Time{t}
}

// MarshalJSONTo writes the time in TimeLayout.
func (t Time) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(t.UTC().Format(TimeLayout)))
}

// UnmarshalJSONFrom reads an RFC 3339 string or null.
func (t *Time) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		parsed, err := time.Parse(time.RFC3339Nano, tok.String())
		if err != nil {
			return fmt.Errorf("timestamp %q is not RFC 3339", tok.String())
		}
		t.Time = parsed.UTC()
		return nil
	}
	return fmt.Errorf("timestamp must be a string, got %v", tok.Kind())
}

// Value is a nullable timestamp's time: zero for nil.
func (t *Time) Value() time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
