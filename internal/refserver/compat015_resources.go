package refserver

// The resource and status routes a 0.15 broker serves besides the ones the SDK reads: the
// bare queue list and description, namespaces, tasks, the status dashboard and a queue's bare
// message list. What they answer, as 0.15 does:
//
//   - the bare list and description count pending as 0.15's resources routes do, without the
//     messages in flight; a namespace or a task is counted over its queues, and a queue with
//     none is in neither list;
//   - an unknown queue is a 200 {"error":"Queue not found"} on the description, and an empty
//     body on the message list, which lists every message of the queue, newest first, whatever
//     limit says, with queue mode's status, and answers any offset above 0 with 0.15's NULL
//     result;
//   - the dashboard's counters are the broker's; the worker metrics 0.15 samples per minute
//     are null, and its per-route request counters are 0.

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// allQueues015 is every queue, newest first.
func (s *Server) allQueues015() []broker.QueueSummary {
	var all []broker.QueueSummary
	for offset := 0; ; offset += 1000 {
		page := s.engine.Queues(broker.QueueFilter{Limit: 1000, Offset: offset})
		all = append(all, page.Queues...)
		if len(page.Queues) < 1000 {
			return all
		}
	}
}

// resourcePending015 is pending as 0.15's resources routes count it: without the messages
// in flight.
func resourcePending015(c broker.Counts) int64 { return max(c.Pending-c.Processing, 0) }

func (s *Server) handleResourceQueues015(w http.ResponseWriter, _ *http.Request) {
	out := wire.ResourceQueues015{Queues: []wire.QueueSummary015{}}
	for _, q := range s.allQueues015() {
		out.Queues = append(out.Queues, wire.QueueSummary015{
			CreatedAt: wire.Time015{Time: q.CreatedAt}, ID: q.ID, Name: q.Name, Namespace: q.Namespace,
			Task: q.Task, Partitions: q.Partitions,
			Messages: wire.SummaryCounts015{Total: q.Messages.Total, Pending: resourcePending015(q.Messages), Processing: q.Messages.Processing},
		})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleResourceQueue015(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.QueueDetail(rawValue(r, route.ResourceQueue, "queue"))
	if err != nil {
		writeNotFound015JSON(w, "Queue")
		return
	}
	q := &d.Queue
	out := wire.ResourceQueue015{
		CreatedAt: wire.Time015{Time: q.CreatedAt}, ID: q.ID, Name: q.Name, Namespace: q.Namespace, Task: q.Task,
		Partitions: make([]wire.ResourcePartition015, 0, len(d.Partitions)), Totals: counts015(d.Totals),
	}
	for _, p := range d.Partitions {
		out.Partitions = append(out.Partitions, wire.ResourcePartition015{
			CreatedAt: wire.Time015{Time: p.CreatedAt}, ID: p.ID, Name: p.Name, Stats: counts015(p.Messages),
			OldestMessage: time015(p.OldestMessage), NewestMessage: time015(p.NewestMessage),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// labelSizes is what the namespace and task lists count of one label's queues.
type labelSizes struct {
	queues, partitions int64
	messages           wire.PendingTotal015
}

// byLabel counts the queues by the label of each that label gives, skipping queues without one;
// the labels come back in byte order.
func (s *Server) byLabel(label func(broker.QueueSummary) string) ([]string, map[string]*labelSizes) {
	sizes := map[string]*labelSizes{}
	for _, q := range s.allQueues015() {
		l := label(q)
		if l == "" {
			continue
		}
		z := sizes[l]
		if z == nil {
			z = &labelSizes{}
			sizes[l] = z
		}
		z.queues++
		z.partitions += q.Partitions
		z.messages.Total += q.Messages.Total
		z.messages.Pending += resourcePending015(q.Messages)
	}
	names := make([]string, 0, len(sizes))
	for l := range sizes {
		names = append(names, l)
	}
	slices.Sort(names)
	return names, sizes
}

func (s *Server) handleNamespaces015(w http.ResponseWriter, _ *http.Request) {
	names, sizes := s.byLabel(func(q broker.QueueSummary) string { return q.Namespace })
	out := wire.Namespaces015{Namespaces: make([]wire.Namespace015, 0, len(names))}
	for _, n := range names {
		z := sizes[n]
		out.Namespaces = append(out.Namespaces, wire.Namespace015{Messages: z.messages, Namespace: n, Partitions: z.partitions, Queues: z.queues})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleTasks015(w http.ResponseWriter, _ *http.Request) {
	names, sizes := s.byLabel(func(q broker.QueueSummary) string { return q.Task })
	out := wire.Tasks015{Tasks: make([]wire.Task015, 0, len(names))}
	for _, n := range names {
		z := sizes[n]
		out.Tasks = append(out.Tasks, wire.Task015{Messages: z.messages, Partitions: z.partitions, Queues: z.queues, Task: n})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleStatus015 answers 0.15's dashboard over the last hour (or from, to), one bucket per
// minute of which the broker's current one alone is filled.
func (s *Server) handleStatus015(w http.ResponseWriter, r *http.Request) {
	now := s.engine.Now().UTC()
	from, to := now.Add(-time.Hour), now
	if t, err := parseTime(r.URL.Query().Get("from")); err == nil {
		from = t
	}
	if t, err := parseTime(r.URL.Query().Get("to")); err == nil {
		to = t
	}
	o := s.engine.Overview()
	m := o.Messages
	minute := now.Truncate(time.Minute)
	out := wire.Dashboard015{
		BucketMinutes:   1,
		DeadLetterQueue: wire.DashboardDLQ015{TopErrors: []wire.Nothing{}, TotalMessages: m.DeadLetter},
		Errors:          wire.DashboardErrors015{DLQMessages: m.DeadLetter},
		Messages: wire.DashboardMessages015{
			Completed: m.Completed, DeadLetter: m.DeadLetter, Failed: m.Failed, Pending: m.Pending,
			Processing: m.Processing, Total: m.Total,
		},
		PointCount: 1,
		Queues:     []wire.Nothing{},
		Throughput: []wire.DashboardPoint015{{
			IngestedPerSecond: wire.Rate015(o.IngestedPerSecond), ProcessedPerSecond: wire.Rate015(o.ProcessedPerSecond),
			Timestamp: minute.Format(time.RFC3339),
		}},
		TimeRange: wire.DashboardRange015{From: wire.Time015{Time: from}, To: wire.Time015{Time: to}},
		Workers:   []wire.DashboardWorker015{{DBConnections: 1, FreeSlots: 1, Hostname: "queentest"}},
	}
	writeJSON(w, http.StatusOK, out)
}

// writeNull015 is 0.15's answer when its SQL function returned NULL.
func writeNull015(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, wire.NullValue015{Success: true})
}

func (s *Server) handleQueueMessages015(w http.ResponseWriter, r *http.Request) {
	if laxInt015(r.URL.Query(), "offset", 0) > 0 {
		writeNull015(w)
		return
	}
	epoch := time.Unix(0, 0)
	list, err := s.engine.Browse015(broker.BrowseQuery{Queue: rawValue(r, route.QueueMessages, "queue"), From: &epoch, Limit: maxInt32})
	if err != nil {
		writeEmpty015(w)
		return
	}
	out := make([]wire.QueueMessage015, len(list.Messages))
	for i := range list.Messages {
		e := &list.Messages[i]
		out[i] = wire.QueueMessage015{CreatedAt: wire.Time015{Time: e.CreatedAt}, ID: e.ID, Partition: e.Partition,
			PartitionID: e.PartitionID, Queue: e.Queue, QueuePath: e.QueuePath, Status: e.QueueStatus, TransactionID: e.TransactionID}
	}
	slices.SortStableFunc(out, func(a, b wire.QueueMessage015) int {
		return cmp.Compare(b.CreatedAt.UnixNano(), a.CreatedAt.UnixNano())
	})
	writeJSON(w, http.StatusOK, out)
}
