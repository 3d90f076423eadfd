// Package testutil holds small helpers that tests of several packages share.
package testutil

import (
	"bytes"
	"sync"
)

// LogBuffer is a bytes.Buffer safe for the concurrent writes of a logger whose handlers run on
// many goroutines. The zero value is ready.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
