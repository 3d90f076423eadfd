package queen

import (
	"testing"

	"github.com/queenmq/queen-go/internal/testmode"
)

// TestMain fails the package if any test leaves a goroutine behind; the tests pick each broker
// mode themselves.
func TestMain(m *testing.M) {
	testmode.Main(m)
}
