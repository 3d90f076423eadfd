//go:build !unix

package queen

import "time"

// processCPU is not measured here; the benchmarks then report 0 CPU time.
func processCPU() time.Duration { return 0 }
