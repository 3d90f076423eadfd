package refserver

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// query reads URL query parameters: values are URL-decoded, an absent or empty
// parameter takes its default, and a repeated one counts its first value.
type query url.Values

// parseQuery decodes the request's query string; a malformed one (a bad %-escape, a ';'
// separator) is a 400 rather than silently dropped parameters.
func parseQuery(r *http.Request) (query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	return query(v), nil
}

func (q query) get(name string) string {
	if vs := q[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// integer parses an optional '-' and decimal digits; anything else is non-numeric.
func parseInteger(s string) (int64, bool) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil { // digits beyond int64: still an integer, saturated (a huge batch is valid)
		if s[0] == '-' {
			return math.MinInt64, true
		}
		return math.MaxInt64, true
	}
	return n, true
}

// intIn reads an integer parameter that must lie in [lo, hi]; why is the refusal text.
func (q query) intIn(name string, lo, hi int64, def int64, why string) (int64, error) {
	s := q.get(name)
	if s == "" {
		return def, nil
	}
	n, ok := parseInteger(s)
	if !ok || n < lo || n > hi {
		return 0, badRequest("%s %s, got %q", name, why, s)
	}
	return n, nil
}

// boolean reads true/1 or false/0.
func (q query) boolean(name string, def bool) (bool, error) {
	switch s := q.get(name); s {
	case "":
		return def, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, badRequest("%s must be true, false, 1 or 0, got %q", name, s)
	}
}

// timestamp reads an RFC 3339 time, with or without fractions, Z or a numeric offset.
func (q query) timestamp(name string) (t time.Time, ok bool, err error) {
	s := q.get(name)
	if s == "" {
		return time.Time{}, false, nil
	}
	t, err = parseTime(s)
	if err != nil {
		return time.Time{}, false, badRequest("%s must be an RFC 3339 timestamp (send + as %%2B), got %q", name, s)
	}
	return t, true, nil
}

const maxInt = int64(^uint(0) >> 1)
