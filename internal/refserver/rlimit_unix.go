//go:build unix

package refserver

import "syscall"

// openFileLimit is the process's limit on open descriptors, 0 when unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
		return 0
	}
	return uint64(r.Cur) // unlimited is the largest value, which nothing reaches
}
