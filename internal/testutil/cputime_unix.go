//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has used so far, in user and system mode, on every
// thread. Benchmarks report it per operation: other processes on a busy machine disturb it less
// than wall time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
