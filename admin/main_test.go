package admin_test

import (
	"testing"

	"github.com/queenmq/queen-go/internal/testmode"
)

// TestMain fails the package if a test leaves a goroutine behind (brokers, clients, pollers).
func TestMain(m *testing.M) {
	testmode.Main(m)
}
