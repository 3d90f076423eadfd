package queen_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
)

// The same (queue, partition, group) goes to the same healthy server.
func TestRequestsOfOneKeyGoToOneServer(t *testing.T) {
	t.Parallel()
	var hits [3]atomic.Int32
	urls := make([]string, 3)
	for i := range hits {
		_, url := brokerStub(t, func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			w.WriteHeader(http.StatusNoContent)
		})
		urls[i] = url
	}
	c := stubClient(t, urls[0], queen.WithServers(urls[1:]...))
	for range 12 {
		_, err := c.Queue("orders").Partition("p7").Group("billing").Pop(t.Context())
		require.NoError(t, err)
	}
	used := 0
	for i := range hits {
		switch hits[i].Load() {
		case 0:
		case 12:
			used++
		default:
			t.Fatalf("server %d got %d of the 12 pops of one key", i, hits[i].Load())
		}
	}
	assert.Equal(t, 1, used)
}
