//go:build !unix

package refserver

// openFileLimit is the process's limit on open descriptors, 0 when unknown (here, always).
func openFileLimit() uint64 { return 0 }
