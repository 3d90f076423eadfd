package queentest

import (
	"encoding/json"
	"testing"
	"time"
)

// appendString must write JSON that decodes to what encoding/json's own encoding decodes to.
func FuzzAppendString(f *testing.F) {
	for _, seed := range []string{"", "plain", "q\"b\\s/", "\n\r\t\x00\x1f", "é€😀", "\u2028\u2029", "\xff\xfe bad", "<&>"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		if !json.Valid(out) {
			t.Fatalf("appendString(%q) = %s: not valid JSON", s, out)
		}
		var got, want string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal(s)
		_ = json.Unmarshal(ref, &want)
		if got != want {
			t.Fatalf("appendString(%q) decodes to %q, want %q", s, got, want)
		}
	})
}

// §2.1: written timestamps are UTC with Z and exactly six fractional digits.
func TestAppendTime_MicrosecondsUTC(t *testing.T) {
	t.Parallel()
	cases := map[time.Time]string{
		time.Date(2026, 11, 29, 21, 33, 13, 427069000, time.UTC):                       `"2026-11-29T21:33:13.427069Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC):                                    `"2026-01-02T03:04:05.000000Z"`,
		time.Date(2026, 1, 2, 4, 4, 5, 999999999, time.FixedZone("CET", 3600)):         `"2026-01-02T03:04:05.999999Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 1000, time.FixedZone("minus", -2*3600)).Local(): `"2026-01-02T05:04:05.000001Z"`,
	}
	for in, want := range cases {
		if got := string(appendTime(nil, in)); got != want {
			t.Errorf("appendTime(%v) = %s, want %s", in, got, want)
		}
	}
}
