package refserver

import (
	"net/http"
	"time"

	"github.com/queenmq/queen-go/internal/wire"
)

// The read routes' parameters: each bad one answers 400 "<parameter> <why>".

// readInt reads an integer parameter in [lo, hi]; beyond int64 it saturates, so a huge offset
// is valid and a huge limit is out of range.
func (q query) readInt(name string, lo, hi, def int64, why string) (int64, error) {
	s := q.get(name)
	if s == "" {
		return def, nil
	}
	n, ok := parseInteger(s)
	if !ok || n < lo || n > hi {
		return 0, badRequest("%s %s", name, why)
	}
	return n, nil
}

func (q query) limit(def int64) (int, error) {
	n, err := q.readInt("limit", 1, 1000, def, "must be an integer from 1 to 1000")
	return int(n), err
}

func (q query) offset() (int, error) {
	n, err := q.readInt("offset", 0, maxInt, 0, "must be a non-negative integer")
	return int(min(n, maxInt32)), err
}

// readBool reads true/1 or false/0.
func (q query) readBool(name string, def bool) (bool, error) {
	switch q.get(name) {
	case "":
		return def, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, badRequest("%s must be a boolean", name)
}

// readTime reads an optional RFC 3339 time, with or without fractions, Z or an offset.
func (q query) readTime(name string) (*time.Time, error) {
	s := q.get(name)
	if s == "" {
		return nil, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return nil, badRequest("%s must be an RFC 3339 timestamp", name)
	}
	return &t, nil
}

// readName reads an optional queue, partition or group name parameter.
func (q query) readName(name string) (string, error) {
	s := q.get(name)
	if s == "" {
		return "", nil
	}
	return s, checkName(name, s)
}

// pathName reads a name path segment (percent-decoded) and checks it.
func pathName(r *http.Request, segment, field string) (string, error) {
	s := r.PathValue(segment)
	return s, checkName(field, s)
}

// writeWire answers a route body in the wire codec.
func writeWire(w http.ResponseWriter, v any) {
	b, err := wire.Marshal(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "encoding response: "+err.Error())
		return
	}
	writeBody(w, http.StatusOK, b)
}
