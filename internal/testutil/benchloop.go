package testutil

import "testing"

// CPULoop runs op b.N times, reporting allocations and ProcessCPU per operation as cpu-ns/op.
func CPULoop(b *testing.B, op func()) {
	b.ReportAllocs()
	start := ProcessCPU()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(ProcessCPU()-start)/float64(b.N), "cpu-ns/op")
}
