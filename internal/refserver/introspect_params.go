package refserver

import (
	"net/http"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
)

// The read routes answer a bad parameter 400 "<parameter> <why>", without the value sent; they
// read their parameters as every route does.

// quiet is a read route's refusal of the parameter name: err's text is replaced by why.
func quiet(err error, name, why string) error {
	if err != nil {
		return badRequest("%s %s", name, why)
	}
	return nil
}

// readInt reads an integer parameter in [lo, hi]; beyond int64 it saturates, so a huge offset
// is valid and a huge limit is out of range.
func (q query) readInt(name string, lo, hi, def int64, why string) (int64, error) {
	n, err := q.intIn(name, lo, hi, def, why)
	return n, quiet(err, name, why)
}

func (q query) limit(def int64) (int, error) {
	n, err := q.readInt("limit", 1, 1000, def, "must be an integer from 1 to 1000")
	return int(n), err
}

func (q query) offset() (int, error) {
	n, err := q.readInt("offset", 0, maxInt, 0, "must be a non-negative integer")
	return int(min(n, maxInt32)), err
}

// maxListPage is the group list's and the lagging list's page size, by default and at most:
// no answer holds more entries, whatever the state.
const maxListPage = 1000

// listPage reads the limit and offset of the group list or the lagging list.
func (q query) listPage() (broker.Page, error) {
	limit, err := q.limit(maxListPage)
	if err != nil {
		return broker.Page{}, err
	}
	offset, err := q.offset()
	return broker.Page{Limit: limit, Offset: offset}, err
}

// readBool reads true/1 or false/0.
func (q query) readBool(name string, def bool) (bool, error) {
	b, err := q.boolean(name, def)
	return b, quiet(err, name, "must be a boolean")
}

// readTime reads an optional RFC 3339 time, with or without fractions, Z or an offset.
func (q query) readTime(name string) (*time.Time, error) {
	t, ok, err := q.timestamp(name)
	if err != nil || !ok {
		return nil, quiet(err, name, "must be an RFC 3339 timestamp")
	}
	return &t, nil
}

// readName reads an optional queue, partition or group name parameter.
func (q query) readName(name string) (string, error) {
	s := q.get(name)
	return s, checkOptionalName(name, s)
}

// pathName reads a name path segment (percent-decoded) and checks it.
func pathName(r *http.Request, segment, field string) (string, error) {
	s := r.PathValue(segment)
	return s, checkName(field, s)
}
