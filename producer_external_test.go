package queen_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/testmode"
	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A Producer request whose answer was lost is resent and stored once.
func TestAProducerRequestWhoseAnswerWasLostIsStoredOnce(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		srv.Fail(queentest.Fault{Route: "push", After: true})
		log := newResultLog()
		p, err := c.NewProducer(queen.ProducerConfig{OnResult: log.onResult})
		require.NoError(t, err)
		require.NoError(t, p.Send(testutil.Context(t), "q", queen.PushItem{Data: 1}))
		require.NoError(t, p.Flush(testutil.Context(t)))
		require.NoError(t, p.Close(testutil.Context(t)))
		msgs, err := c.Queue("q").Batch(10).Pop(testutil.Context(t))
		require.NoError(t, err)
		assert.Len(t, msgs, 1)
		log.mu.Lock()
		defer log.mu.Unlock()
		for _, errs := range log.got {
			if assert.Len(t, errs, 1) {
				assert.NoError(t, errs[0], "the resend's answer settles it")
			}
		}
		assert.Len(t, log.got, 1)
	})
}

type resultLog struct {
	mu  sync.Mutex
	got map[string][]error // by item TransactionID
	seq map[string][]int64 // offsets by queue/partition, in OnResult order
}

func newResultLog() *resultLog {
	return &resultLog{got: map[string][]error{}, seq: map[string][]int64{}}
}

func (r *resultLog) onResult(queue string, item queen.PushItem, res queen.PushResult, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[item.TransactionID] = append(r.got[item.TransactionID], err)
	r.seq[queue+"/"+item.Partition] = append(r.seq[queue+"/"+item.Partition], res.Offset)
}

// OnResult is called exactly once per item; items of a partition are stored in Send order.
func TestOnResultHearsEveryItemOnceAndPartitionsKeepSendOrder(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		_, tap, c := tapped(t, m, queentest.WithManualClock())
		log := newResultLog()
		p, err := c.NewProducer(queen.ProducerConfig{MaxBatch: 7, OnResult: log.onResult})
		require.NoError(t, err)
		const per = 20
		for i := range per {
			for _, q := range []string{"a", "b"} {
				for _, part := range []string{"p1", "p2"} {
					id := fmt.Sprintf("%s-%s-%d", q, part, i)
					require.NoError(t, p.Send(testutil.Context(t), q, queen.PushItem{Data: i, TransactionID: id, Partition: part}))
				}
			}
		}
		require.NoError(t, p.Flush(testutil.Context(t)))
		log.mu.Lock()
		assert.Len(t, log.got, 4*per)
		for id, errs := range log.got {
			assert.Len(t, errs, 1, "OnResult calls for %s", id)
			assert.NoError(t, errs[0], id)
		}
		log.mu.Unlock()
		for _, q := range []string{"a", "b"} {
			for _, part := range []string{"p1", "p2"} {
				msgs, err := c.Queue(q).Partition(part).Batch(100).Pop(testutil.Context(t))
				require.NoError(t, err)
				require.Len(t, msgs, per)
				for i, msg := range msgs {
					var n int
					require.NoError(t, msg.Decode(&n))
					assert.Equal(t, i, n, "%s/%s in Send order", q, part)
				}
			}
		}
		assert.Less(t, tap.Containing("/push"), 4*per, "items share requests")
		require.NoError(t, p.Close(testutil.Context(t)))
		assert.ErrorIs(t, p.Send(testutil.Context(t), "a", queen.PushItem{Data: 1}), queen.ErrClosed)
		require.NoError(t, p.Close(testutil.Context(t)), "Close is idempotent")
	})
}

// Close whose ctx ends first stops retrying, reports every unanswered item once with an error,
// and returns ctx's error; Send then returns ErrClosed.
func TestCloseWhoseCtxEndsFirstReportsEveryUnansweredItem(t *testing.T) {
	t.Parallel()
	testmode.ForEachMode(t, func(t *testing.T, m testmode.Mode) {
		srv, _, c := tapped(t, m, queentest.WithManualClock())
		srv.Fail(queentest.Fault{Route: "push", Status: 503, Times: 1 << 20})
		log := newResultLog()
		p, err := c.NewProducer(queen.ProducerConfig{OnResult: log.onResult})
		require.NoError(t, err)
		for i := range 5 {
			require.NoError(t, p.Send(testutil.Context(t), "q", queen.PushItem{Data: i, TransactionID: fmt.Sprint("t", i)}))
		}
		ctx, cancel := context.WithTimeout(testutil.Context(t), 50*time.Millisecond)
		defer cancel()
		err = p.Close(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		log.mu.Lock()
		assert.Len(t, log.got, 5)
		for id, errs := range log.got {
			if assert.Len(t, errs, 1, id) {
				assert.Error(t, errs[0], id)
				assert.ErrorIs(t, errs[0], queen.ErrClosed, id)
			}
		}
		log.mu.Unlock()
		assert.ErrorIs(t, p.Send(testutil.Context(t), "q", queen.PushItem{Data: 1}), queen.ErrClosed)
	})
}
