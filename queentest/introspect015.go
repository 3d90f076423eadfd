package queentest

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// The introspection routes as 0.15 answers them (O30–O41): every database-backed answer is a
// 200, errors included; empty results are empty bodies; parameters are read laxly, as 0.15's
// SQL functions do; path segments are not percent-decoded.

func routeIntrospection015(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/status/queues", s.handleQueueList015)
	mux.HandleFunc("GET /api/v1/status/queues/{queue}", s.handleQueueDetail015)
	mux.HandleFunc("GET /api/v1/consumer-groups", s.handleGroupList015)
	mux.HandleFunc("GET /api/v1/consumer-groups/lagging", s.handleLagging015)
	mux.HandleFunc("GET /api/v1/consumer-groups/{group}", s.handleGroupDetail015)
	mux.HandleFunc("GET /api/v1/messages", s.handleMessages015)
	mux.HandleFunc("GET /api/v1/messages/{partitionId}/{transactionId}", s.handleMessage015)
	mux.HandleFunc("GET /api/v1/resources/overview", s.handleOverview015)
}

// writeEmpty015 is 0.15's answer when its query found nothing: 200 and no body.
func writeEmpty015(w http.ResponseWriter) { writeBody(w, http.StatusOK, nil) }

// writeNotFound015JSON is 0.15's "not found" from its database: a 200 carrying the error.
func writeNotFound015JSON(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusOK, wire.ErrorAnswer{Error: what + " not found"})
}

// writeSQLError015 is what 0.15 answers when PostgreSQL refuses a parameter.
func writeSQLError015(w http.ResponseWriter, msg string) {
	writeFailure015(w, "ERROR:  "+msg+"\n")
}

// rawSegment is the i-th segment of the path as sent: 0.15 does not percent-decode them, so
// an escaped name finds nothing (O37).
func rawSegment(r *http.Request, i int) string {
	segs := strings.Split(r.URL.EscapedPath(), "/")
	if i < len(segs) {
		return segs[i]
	}
	return ""
}

// laxInt015 reads an integer as 0.15 does: absent or unparsable is the default (O40, O35).
func laxInt015(v url.Values, name string, def int) int {
	n, err := strconv.Atoi(v.Get(name))
	if err != nil {
		return def
	}
	return n
}

// pageError015 is PostgreSQL's refusal of a negative LIMIT or OFFSET, or "".
func pageError015(limit, offset int) string {
	switch {
	case limit < 0:
		return "LIMIT must not be negative"
	case offset < 0:
		return "OFFSET must not be negative"
	}
	return ""
}

func (s *Server) handleQueueList015(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	limit, offset := laxInt015(v, "limit", 100), laxInt015(v, "offset", 0)
	if msg := pageError015(limit, offset); msg != "" {
		writeSQLError015(w, msg)
		return
	}
	out := wire.QueueList015{
		Pagination: wire.Pagination{Limit: int64(limit), Offset: int64(offset)},
		Queues:     []wire.QueueSummary015{},
	}
	if limit > 0 {
		list := s.engine.Queues(broker.QueueFilter{Namespace: v.Get("namespace"), Task: v.Get("task"), Limit: limit, Offset: offset})
		for _, q := range list.Queues {
			out.Queues = append(out.Queues, wire.QueueSummary015{
				CreatedAt: wire.Time015{Time: q.CreatedAt.Time}, ID: q.ID, Name: q.Name, Namespace: q.Namespace,
				Task: q.Task, Partitions: q.Partitions,
				Messages: wire.SummaryCounts015{Total: q.Messages.Total, Pending: q.Messages.Pending, Processing: q.Messages.Processing},
			})
		}
	}
	writeWire(w, out)
}

// counts015 are 2.0's counts as 0.15 reports them: its statistics never count failed (O31).
func counts015(c wire.Counts) wire.Counts015 {
	return wire.Counts015{Total: c.Total, Pending: c.Pending, Processing: c.Processing, Completed: c.Completed, DeadLetter: c.DeadLetter}
}

func (s *Server) handleQueueDetail015(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.QueueDetail(rawSegment(r, 5))
	if err != nil {
		writeNotFound015JSON(w, "Queue")
		return
	}
	cfg := d.Queue.Config
	out := wire.QueueDetail015{
		Queue: wire.QueueDetailQueue015{
			ID: d.Queue.ID, Name: d.Queue.Name, Namespace: d.Queue.Namespace, Task: d.Queue.Task,
			Priority: d.Queue.Priority, CreatedAt: wire.Time015{Time: d.Queue.CreatedAt.Time},
			Config: wire.QueueConfig015{
				LeaseTime: cfg.LeaseTime, RetryLimit: cfg.RetryLimit, DeadLetterQueue: cfg.DeadLetterQueue,
				RetryDelay: cfg.RetryDelay, TTL: cfg.TTL, MaxQueueSize: cmp.Or(cfg.MaxQueueSize, new(int64)),
			},
		},
		Partitions: make([]wire.PartitionDetail015, 0, len(d.Partitions)),
		Totals:     wire.QueueTotals015{Counts015: counts015(d.Totals.Counts), Messages: counts015(d.Totals.Messages)},
	}
	for _, p := range d.Partitions {
		out.Partitions = append(out.Partitions, wire.PartitionDetail015{
			ID: p.ID, Name: p.Name, CreatedAt: wire.Time015{Time: p.CreatedAt.Time}, Cursor: p.Cursor,
			Messages: counts015(p.Messages), Stats: counts015(p.Stats),
			LastActivity:  wire.Time015Of(p.LastActivity),
			OldestMessage: wire.Time015Of(p.OldestMessage), NewestMessage: wire.Time015Of(p.NewestMessage),
		})
	}
	writeWire(w, out)
}

func (s *Server) handleGroupList015(w http.ResponseWriter, _ *http.Request) {
	list := s.engine.ConsumerGroups015()
	if len(list) == 0 {
		writeEmpty015(w)
		return
	}
	writeWire(w, list)
}

func (s *Server) handleGroupDetail015(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.ConsumerGroup015(rawSegment(r, 4))
	if err != nil {
		writeEmpty015(w)
		return
	}
	writeWire(w, d)
}

// errStoi is std::stoi's failure, which 0.15 answers as a real 500 (O30).
var errStoi = errors.New("stoi")

// stoi parses as C++'s std::stoi: leading spaces, a sign, then at least one digit; whatever
// follows the digits is ignored.
func stoi(s string) (int64, error) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, errStoi
	}
	n, err := strconv.ParseInt(s[:end], 10, 32)
	if err != nil {
		return 0, errStoi
	}
	return n, nil
}

func (s *Server) handleLagging015(w http.ResponseWriter, r *http.Request) {
	minLag := int64(3600)
	if raw := r.URL.Query().Get("minLagSeconds"); raw != "" {
		n, err := stoi(raw)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		minLag = n
	}
	list := s.engine.Lagging015(minLag)
	if len(list) == 0 {
		writeEmpty015(w)
		return
	}
	writeWire(w, list)
}

// browseWindow015 is 0.15's time window: from defaults to an hour ago, and to is rounded up to
// the end of its minute (O35). A time PostgreSQL cannot read is its error message.
func browseWindow015(v url.Values, now time.Time) (from time.Time, to *time.Time, sqlErr string) {
	from = now.Add(-time.Hour)
	if raw := v.Get("from"); raw != "" {
		t, err := parseTime(raw)
		if err != nil {
			return from, nil, timestampError015(raw)
		}
		from = t
	}
	if raw := v.Get("to"); raw != "" {
		t, err := parseTime(raw)
		if err != nil {
			return from, nil, timestampError015(raw)
		}
		end := t.Truncate(time.Minute).Add(time.Minute - time.Nanosecond)
		to = &end
	}
	return from, to, ""
}

func timestampError015(raw string) string {
	return fmt.Sprintf("invalid input syntax for type timestamp with time zone: %q\nCONTEXT:  PL/pgSQL function queen.list_messages_v1(jsonb) line 18 at assignment", raw)
}

// browseQueues015 are the queues a 0.15 browse looks at: the named one, else every queue of
// the namespace (ns) and task given.
func (s *Server) browseQueues015(v url.Values) []string {
	if name := v.Get("queue"); name != "" {
		return []string{name}
	}
	var names []string
	for offset := 0; ; offset += 1000 {
		page := s.engine.Queues(broker.QueueFilter{Namespace: v.Get("ns"), Task: v.Get("task"), Limit: 1000, Offset: offset})
		for _, q := range page.Queues {
			names = append(names, q.Name)
		}
		if len(page.Queues) < 1000 {
			return names
		}
	}
}

func (s *Server) handleMessages015(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	limit, offset := laxInt015(v, "limit", 200), laxInt015(v, "offset", 0)
	from, to, sqlErr := browseWindow015(v, s.Now())
	if sqlErr == "" {
		sqlErr = pageError015(limit, offset)
	}
	if sqlErr != "" {
		writeSQLError015(w, sqlErr)
		return
	}
	status := v.Get("status")
	known := slices.Contains([]string{"", "pending", "processing", "completed", "dead_letter"}, status)
	out := wire.MessageList015{Messages: []wire.MessageEntry015{}}
	var entries []wire.MessageEntry
	queues := s.browseQueues015(v)
	for _, name := range queues {
		bq := broker.BrowseQuery{Queue: name, Partition: v.Get("partition"), From: &from, To: to, Limit: 1}
		if ns := v.Get("ns"); ns != "" {
			bq.Namespace = &ns
		}
		if task := v.Get("task"); task != "" {
			bq.Task = &task
		}
		window, err := s.engine.Browse(bq) // the mode counts the queues with messages in the window
		if err != nil || len(window.Messages) == 0 {
			continue
		}
		out.Mode.HasQueueMode = out.Mode.HasQueueMode || window.Mode.HasQueueMode
		out.Mode.BusGroupsCount += window.Mode.BusGroupsCount
		if !known || limit == 0 {
			continue
		}
		bq.Status, bq.Limit = status, min(offset+limit, maxInt32)
		list, err := s.engine.Browse(bq)
		if err == nil {
			entries = append(entries, list.Messages...)
		}
	}
	if len(queues) > 1 { // newest first across queues; each queue's list already is
		slices.SortStableFunc(entries, func(a, b wire.MessageEntry) int { return b.CreatedAt.Compare(a.CreatedAt.Time) })
	}
	entries = entries[min(offset, len(entries)):]
	entries = entries[:min(limit, len(entries))]
	for _, e := range entries {
		out.Messages = append(out.Messages, entry015(e))
	}
	out.Mode.Type = modeType015(out.Mode.HasQueueMode, out.Mode.BusGroupsCount)
	writeWire(w, out)
}

func modeType015(queueMode bool, busGroups int64) string {
	switch {
	case queueMode && busGroups > 0:
		return "hybrid"
	case queueMode:
		return "queue"
	case busGroups > 0:
		return "bus"
	}
	return "none"
}

// entry015 is a browsed message without its offset and payload (O35).
func entry015(e wire.MessageEntry) wire.MessageEntry015 {
	return wire.MessageEntry015{
		ID: e.ID, TransactionID: e.TransactionID, PartitionID: e.PartitionID, Partition: e.Partition,
		Queue: e.Queue, QueuePath: e.QueuePath, Namespace: e.Namespace, Task: e.Task,
		QueuePriority: e.QueuePriority, TraceID: e.TraceID, ProducerSub: e.ProducerSub,
		CreatedAt: wire.Time015{Time: e.CreatedAt.Time}, Status: e.Status, QueueStatus: e.QueueStatus,
		BusStatus:      wire.BusStatus015{ConsumedBy: e.BusStatus.ConsumedBy, TotalGroups: e.BusStatus.TotalGroups},
		LeaseExpiresAt: wire.Time015Of(e.LeaseExpiresAt),
	}
}

func (s *Server) handleMessage015(w http.ResponseWriter, r *http.Request) {
	partitionID, txID := rawSegment(r, 4), rawSegment(r, 5)
	if _, err := uuid.Parse(partitionID); err != nil {
		writeSQLError015(w, fmt.Sprintf("invalid input syntax for type uuid: %q\nCONTEXT:  unnamed portal parameter $1 = '...'", partitionID))
		return
	}
	d, err := s.engine.Message(partitionID, txID)
	if err != nil {
		writeNotFound015JSON(w, "Message")
		return
	}
	e := entry015(d.MessageEntry)
	out := wire.MessageDetail015{
		ID: e.ID, TransactionID: e.TransactionID, PartitionID: e.PartitionID, Partition: e.Partition,
		Queue: e.Queue, QueuePath: e.QueuePath, Namespace: e.Namespace, Task: e.Task,
		TraceID: e.TraceID, ProducerSub: e.ProducerSub, CreatedAt: e.CreatedAt, Status: e.Status,
		LeaseExpiresAt: e.LeaseExpiresAt, Payload: d.Payload, IsEncrypted: d.IsEncrypted,
		ErrorMessage: d.ErrorMessage, RetryCount: d.RetryCount,
		QueueConfig: wire.MessageQueueConf015{
			LeaseTime: d.QueueConfig.LeaseTime, RetryLimit: d.QueueConfig.RetryLimit,
			RetryDelay: d.QueueConfig.RetryDelay, TTL: d.QueueConfig.TTL, Priority: d.QueueConfig.Priority,
		},
		Mode: wire.MessageDetailMode015{
			BusGroupsCount: d.Mode.BusGroupsCount, HasQueueMode: d.Mode.HasQueueMode, Type: d.Mode.Type,
			ConsumedByGroups: *cmp.Or(d.Mode.ConsumedByGroups, new(int64)),
		},
		ConsumerGroups: []wire.MessageGroup015{},
	}
	rows := s.engine.CursorRows015(partitionID)
	for _, g := range d.ConsumerGroups {
		if rows[g.Name] {
			out.ConsumerGroups = append(out.ConsumerGroups, wire.MessageGroup015{Name: g.Name, Consumed: g.Consumed, LeaseExpiresAt: wire.Time015Of(g.LeaseExpiresAt)})
		}
	}
	writeWire(w, out)
}

func (s *Server) handleOverview015(w http.ResponseWriter, _ *http.Request) {
	o := s.engine.Overview()
	writeWire(w, wire.Overview015{
		Queues: o.Queues, Partitions: o.Partitions, Namespaces: o.Namespaces, Tasks: o.Tasks,
		Messages: wire.Counts015{
			Total: o.Messages.Total, Pending: o.Messages.Pending, Processing: o.Messages.Processing,
			Completed: o.Messages.Completed, Failed: o.Messages.Failed, DeadLetter: o.Messages.DeadLetter,
		},
		Lag: o.Lag, Throughput: o.Throughput, Timestamp: wire.Time015{Time: o.Timestamp.Time}, StatsAge: o.StatsAge,
	})
}
