package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The progress bar of a batch fills in proportion to the items done.
func TestProgressBarDrawing(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	drawProgress(&b, "replay", 3, 4)
	assert.Equal(t, "\rreplay [======================        ] 3/4", b.String())
}

// Output that is not a terminal gets no progress bar.
func TestPipesGetNoProgressBar(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	assert.False(t, isTerminal(&b))
}
