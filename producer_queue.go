package queen

// itemQueue is a lane's accepted items in Send order: a ring that grows by doubling, so taking a
// request's items from the front never moves the ones behind them.
type itemQueue struct {
	buf  []queued // len is a power of two, or 0
	head int
	n    int
}

func (q *itemQueue) len() int { return q.n }

func (q *itemQueue) at(i int) *queued { return &q.buf[(q.head+i)&(len(q.buf)-1)] }

func (q *itemQueue) push(it queued) {
	if q.n == len(q.buf) {
		grown := make([]queued, max(16, 2*len(q.buf)))
		for i := range q.n {
			grown[i] = *q.at(i)
		}
		q.buf, q.head = grown, 0
	}
	*q.at(q.n) = it
	q.n++
}

// unshift puts it back in front of the others.
func (q *itemQueue) unshift(it queued) {
	if q.n == len(q.buf) {
		q.push(it) // grows the ring
		q.n--
	}
	q.head = (q.head - 1) & (len(q.buf) - 1)
	q.buf[q.head] = it
	q.n++
}

// take moves the first k items to dst, dropping the queue's references to them.
func (q *itemQueue) take(dst []queued, k int) []queued {
	for range k {
		it := q.at(0)
		dst = append(dst, *it)
		*it = queued{}
		q.head = (q.head + 1) & (len(q.buf) - 1)
		q.n--
	}
	if q.n == 0 && len(q.buf) > 1024 {
		q.buf, q.head = nil, 0 // a burst is over: let its ring go
	}
	return dst
}
