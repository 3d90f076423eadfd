package admin_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (brokers, clients, pollers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
