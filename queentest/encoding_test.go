package queentest

import (
	"testing"
	"time"
)

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
