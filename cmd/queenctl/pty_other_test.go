//go:build !linux

package main

import (
	"os"
	"testing"
)

// openPTY is only written for Linux's pseudo-terminals.
func openPTY(t *testing.T) *os.File {
	t.Skip("opening a pseudo-terminal is written for Linux only")
	return nil
}
