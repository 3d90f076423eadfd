package queen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMarkSettledOnlyOnce(t *testing.T) {
	t.Parallel()
	var m Message
	assert.True(t, m.markSettled())
	assert.False(t, m.markSettled())
	m.unsettle()
	assert.True(t, m.markSettled())
}
