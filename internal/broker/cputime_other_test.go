//go:build !unix

package broker

import "time"

// processCPU is unknown here; benchmarks then report 0 CPU time.
func processCPU() time.Duration { return 0 }
