package queen

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// defaultMaxResponseBytes is the largest answer body read unless WithMaxResponseBytes says
// otherwise: far above a full pop (10,000 messages, 16 MiB of data), far below what would
// hurt a worker.
const defaultMaxResponseBytes = 64 << 20

// WithMaxResponseBytes sets the largest answer body the client reads, in bytes. A call whose
// answer is larger fails with an error naming the limit, the route and the size read, having
// held at most n bytes of it in memory. Default: 64 MiB.
func WithMaxResponseBytes(n int64) Option {
	return func(c *clientConfig) {
		if n <= 0 {
			c.fail(invalidOption("maxResponseBytes", n, "must be positive"))
		}
		c.maxResponse = n
	}
}

// readAnswer reads a 2xx body into buf through body, the call's own limited reader, refusing
// one larger than the client's limit before holding more than the limit (plus one byte) in
// memory.
func (c *Client) readAnswer(r *request, resp *http.Response, buf *bytes.Buffer, body *io.LimitedReader) error {
	limit := c.maxResponse
	if resp.ContentLength > limit {
		return &answerTooLargeError{method: r.method, path: r.path, limit: limit, size: resp.ContentLength, announced: true}
	}
	*body = io.LimitedReader{R: resp.Body, N: limit + 1}
	n, err := buf.ReadFrom(body)
	if err != nil {
		return c.transportError(r, err)
	}
	if n > limit {
		return &answerTooLargeError{method: r.method, path: r.path, limit: limit, size: n}
	}
	return nil
}

// answerTooLargeError is an answer refused for its size; the rest of it is never read.
type answerTooLargeError struct {
	method, path string
	limit, size  int64
	announced    bool // size is the Content-Length the broker announced, not bytes read
}

func (e *answerTooLargeError) Error() string {
	if e.announced {
		return fmt.Sprintf("queen: %s %s: answer of %d bytes (Content-Length) exceeds the %d-byte limit (WithMaxResponseBytes); nothing read",
			e.method, e.path, e.size, e.limit)
	}
	return fmt.Sprintf("queen: %s %s: answer exceeds the %d-byte limit (WithMaxResponseBytes): read %d bytes before giving up",
		e.method, e.path, e.limit, e.size)
}
