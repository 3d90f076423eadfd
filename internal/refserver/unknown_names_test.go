package refserver

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/queenmq/queen-go/internal/testutil"
)

// R145: pops with a consumer group on queues that do not exist, and on partitions that do not,
// answer 204 and keep nothing: after 2,000 of them with 250-byte names the broker holds what
// it held before, within a few hundred KB. Not parallel: it measures the heap, which other
// tests would move.
func TestPop_UnknownNamesKeepNoState_R145(t *testing.T) {
	_, c := start(t)
	c.PushN("known", "", "m", 1)
	pad := strings.Repeat("x", 240)
	round := func(i int) {
		name := fmt.Sprintf("%s-%06d", pad, i)
		for _, path := range []string{"/api/v1/pop/queue/" + name, "/api/v1/pop/queue/known/partition/" + name} {
			if r := c.Get(path + "?" + testutil.Query("consumerGroup", name, "subscriptionMode", "all").Encode()); r.Status != http.StatusNoContent {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
		}
	}
	for i := range 200 { // connections, buffers and the bounded table of early starts settle first
		round(i)
	}
	before := liveHeap()
	for i := range 2000 {
		round(200 + i)
	}
	after := liveHeap()
	if grown := after - before; grown > 300<<10 {
		t.Fatalf("2,000 rounds of pops on unknown names kept %d bytes", grown)
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
