package refserver

// The introspection routes as 0.15 answers them. What differs from 2.0:
//
//   - every database-backed answer is a 200, errors included, and a query that found nothing
//     is an empty body;
//   - parameters are read laxly, as 0.15's SQL functions do: what does not parse takes its
//     default, a negative limit or offset is PostgreSQL's refusal, minLagSeconds is read as
//     C++'s std::stoi reads it;
//   - path segments are not percent-decoded, so an escaped name finds nothing;
//   - no 2.0-only member is sent (totals, offsets, payloads in a browse, a group's
//     conflation), failed is never counted, and timestamps have milliseconds;
//   - a browse's time window defaults to the last hour, and its end is rounded up to the end
//     of its minute;
//   - the group reads are the engine's 0.15 reads, over the groups' cursor rows.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/names"
	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

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

// rawValue is the segment of the path that stands for {name} in rt's pattern, as sent: 0.15
// does not percent-decode them, so an escaped name finds nothing.
func rawValue(r *http.Request, rt route.Route, name string) string {
	segs := strings.Split(r.URL.EscapedPath(), "/")
	for i, p := range strings.Split(rt.Pattern, "/") {
		if p == "{"+name+"}" && i < len(segs) {
			return segs[i]
		}
	}
	return ""
}

// laxInt015 reads an integer as 0.15 does: absent or unparsable is the default.
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
				CreatedAt: wire.Time015{Time: q.CreatedAt}, ID: q.ID, Name: q.Name, Namespace: q.Namespace,
				Task: q.Task, Partitions: q.Partitions,
				Messages: wire.SummaryCounts015{Total: q.Messages.Total, Pending: q.Messages.Pending, Processing: q.Messages.Processing},
			})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// counts015 are the counts as 0.15 reports them: its statistics never count failed.
func counts015(c broker.Counts) wire.Counts015 {
	return wire.Counts015{Total: c.Total, Pending: c.Pending, Processing: c.Processing, Completed: c.Completed, DeadLetter: c.DeadLetter}
}

func (s *Server) handleQueueDetail015(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.QueueDetail(rawValue(r, route.QueueDetail, "queue"))
	if err != nil {
		writeNotFound015JSON(w, "Queue")
		return
	}
	q := &d.Queue
	out := wire.QueueDetail015{
		Queue: wire.QueueDetailQueue015{
			ID: q.ID, Name: q.Name, Namespace: q.Namespace, Task: q.Task,
			Priority: q.Priority, CreatedAt: wire.Time015{Time: q.CreatedAt},
			Config: wire.QueueConfig015{
				LeaseTime: q.LeaseTime, RetryLimit: q.RetryLimit, DeadLetterQueue: q.DeadLetterQueue,
				RetryDelay: orDefault015(q.RetryDelay, retryDelay015), TTL: orDefault015(q.TTL, ttl015),
				MaxQueueSize: orDefault015(q.MaxSize, 0),
			},
		},
		Partitions: make([]wire.PartitionDetail015, 0, len(d.Partitions)),
		Totals:     wire.QueueTotals015Of(counts015(d.Totals)),
	}
	for _, p := range d.Partitions {
		out.Partitions = append(out.Partitions, wire.PartitionDetail015{
			ID: p.ID, Name: p.Name, CreatedAt: wire.Time015{Time: p.CreatedAt},
			Cursor:   wire.PartitionCursor015{TotalConsumed: p.TotalConsumed}, // 0.15 counts no batches
			Messages: counts015(p.Messages), Stats: counts015(p.Messages),
			LastActivity:  time015(p.LastActivity),
			OldestMessage: time015(p.OldestMessage), NewestMessage: time015(p.NewestMessage),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// A queue's options as 0.15 stores them when configure leaves them out: what its configure
// answers and its read routes report.
const (
	retryDelay015 = 1000 // milliseconds
	ttl015        = 3600 // seconds
)

// orDefault015 is the configured value, else 0.15's default def.
func orDefault015(v *int64, def int64) *int64 {
	if v != nil {
		return v
	}
	return &def
}

// time015 is t in 0.15's layout; the zero time is nil (null).
func time015(t time.Time) *wire.Time015 {
	if t.IsZero() {
		return nil
	}
	return &wire.Time015{Time: t}
}

func (s *Server) handleGroupList015(w http.ResponseWriter, _ *http.Request) {
	list := s.engine.ConsumerGroups015()
	if len(list) == 0 {
		writeEmpty015(w)
		return
	}
	out := make([]wire.GroupSummary015, len(list))
	for i := range list {
		g := &list[i]
		out[i] = wire.GroupSummary015{Name: g.Name, QueueName: g.Queue, Topics: []string{g.Queue},
			Members: g.Members, PartitionsWithLag: g.PartitionsWithLag, MaxTimeLag: g.MaxTimeLag, State: g.State}
		if sub := g.Subscription; sub != nil {
			out[i].SubscriptionMode = &sub.Mode
			out[i].SubscriptionTimestamp = &wire.Time015{Time: sub.Timestamp}
			out[i].SubscriptionCreatedAt = &wire.Time015{Time: sub.CreatedAt}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGroupDetail015(w http.ResponseWriter, r *http.Request) {
	d, err := s.engine.ConsumerGroup015(rawValue(r, route.GroupDetail, "group"))
	if err != nil {
		writeEmpty015(w)
		return
	}
	out := make(wire.GroupDetail015, len(d))
	for name, parts := range d {
		list := make([]wire.GroupPartition015, len(parts))
		for i, p := range parts {
			list[i] = wire.GroupPartition015{Partition: p.Partition, OffsetLag: p.OffsetLag,
				TimeLagSeconds: p.TimeLagSeconds, LeaseActive: p.LeaseActive, LastConsumedAt: time015(p.LastConsumedAt),
				WorkerID: nullable(p.WorkerID), TotalConsumed: p.TotalConsumed}
		}
		out[name] = wire.GroupDetailQueue015{Partitions: list}
	}
	writeJSON(w, http.StatusOK, out)
}

// errStoi is std::stoi's failure, which 0.15 answers as a real 500.
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
			WriteError(w, http.StatusInternalServerError, err.Error())
			return
		}
		minLag = n
	}
	list := s.engine.Lagging015(minLag)
	if len(list) == 0 {
		writeEmpty015(w)
		return
	}
	out := make([]wire.LaggingEntry015, len(list))
	for i, e := range list {
		out[i] = wire.LaggingEntry015{ConsumerGroup: e.Group, QueueName: e.Queue, PartitionName: e.Partition,
			PartitionID: e.PartitionID, OffsetLag: e.OffsetLag, TimeLagSeconds: e.TimeLagSeconds, LagHours: e.LagHours,
			OldestUnconsumedAt: &wire.Time015{Time: e.OldestUnconsumedAt}, LastConsumedAt: time015(e.LastConsumedAt),
			WorkerID: nullable(e.WorkerID)}
	}
	writeJSON(w, http.StatusOK, out)
}

// browseWindow015 is 0.15's time window: from defaults to an hour ago, and to is rounded up to
// the end of its minute. A time PostgreSQL cannot read is its error message.
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
	from, to, sqlErr := browseWindow015(v, s.engine.Now())
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
	var entries []broker.MessageEntry
	queues := s.browseQueues015(v)
	for _, name := range queues {
		bq := broker.BrowseQuery{Queue: name, Partition: v.Get("partition"), From: &from, To: to, Limit: 1}
		if ns := v.Get("ns"); ns != "" {
			bq.Namespace = &ns
		}
		if task := v.Get("task"); task != "" {
			bq.Task = &task
		}
		window, err := s.engine.Browse015(bq) // the mode counts the queues with messages in the window
		if err != nil || len(window.Messages) == 0 {
			continue
		}
		out.Mode.HasQueueMode = out.Mode.HasQueueMode || window.Mode.HasQueueMode
		out.Mode.BusGroupsCount += window.Mode.BusGroupsCount
		if !known || limit == 0 {
			continue
		}
		bq.Status, bq.Limit = status, min(offset+limit, maxInt32)
		list, err := s.engine.Browse015(bq)
		if err == nil {
			entries = append(entries, list.Messages...)
		}
	}
	if len(queues) > 1 { // newest first across queues; each queue's list already is
		slices.SortStableFunc(entries, func(a, b broker.MessageEntry) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	entries = entries[min(offset, len(entries)):]
	entries = entries[:min(limit, len(entries))]
	for i := range entries {
		out.Messages = append(out.Messages, entry015(&entries[i]))
	}
	out.Mode.Type = modeType015(out.Mode.HasQueueMode, out.Mode.BusGroupsCount)
	writeJSON(w, http.StatusOK, out)
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

// entry015 is a browsed message without its offset and payload.
func entry015(e *broker.MessageEntry) wire.MessageEntry015 {
	return wire.MessageEntry015{
		ID: e.ID, TransactionID: e.TransactionID, PartitionID: e.PartitionID, Partition: e.Partition,
		Queue: e.Queue, QueuePath: e.QueuePath, Namespace: e.Namespace, Task: e.Task,
		QueuePriority: e.QueuePriority, TraceID: nullable(e.TraceID),
		CreatedAt: wire.Time015{Time: e.CreatedAt}, Status: e.Status, QueueStatus: e.QueueStatus,
		BusStatus:      wire.BusStatus015{ConsumedBy: e.ConsumedBy, TotalGroups: e.TotalGroups},
		LeaseExpiresAt: time015(e.LeaseExpiresAt),
	}
}

func (s *Server) handleMessage015(w http.ResponseWriter, r *http.Request) {
	partitionID, txID := rawValue(r, route.Message, "partitionId"), rawValue(r, route.Message, "transactionId")
	if !names.IsUUID(partitionID) {
		writeSQLError015(w, fmt.Sprintf("invalid input syntax for type uuid: %q\nCONTEXT:  unnamed portal parameter $1 = '...'", partitionID))
		return
	}
	d, err := s.engine.Message015(partitionID, txID)
	if err != nil {
		writeNotFound015JSON(w, "Message")
		return
	}
	e := entry015(&d.MessageEntry)
	c := &d.Config
	out := wire.MessageDetail015{
		ID: e.ID, TransactionID: e.TransactionID, PartitionID: e.PartitionID, Partition: e.Partition,
		Queue: e.Queue, QueuePath: e.QueuePath, Namespace: e.Namespace, Task: e.Task,
		TraceID: e.TraceID, ProducerSub: e.ProducerSub, CreatedAt: e.CreatedAt, Status: e.Status,
		LeaseExpiresAt: e.LeaseExpiresAt, Payload: d.Payload, ErrorMessage: d.ErrorMessage, RetryCount: d.RetryCount,
		QueueConfig: wire.MessageQueueConf015{
			LeaseTime: c.LeaseTime, RetryLimit: c.RetryLimit, Priority: c.Priority,
			RetryDelay: orDefault015(c.RetryDelay, retryDelay015), TTL: orDefault015(c.TTL, ttl015),
		},
		Mode: wire.MessageDetailMode015{
			BusGroupsCount: d.Mode.BusGroupsCount, HasQueueMode: d.Mode.HasQueueMode, Type: d.Mode.Type,
			ConsumedByGroups: d.ConsumedBy,
		},
		ConsumerGroups: make([]wire.MessageGroup015, 0, len(d.Groups)),
	}
	for _, g := range d.Groups {
		out.ConsumerGroups = append(out.ConsumerGroups, wire.MessageGroup015{Name: g.Name, Consumed: g.Consumed, LeaseExpiresAt: time015(g.LeaseExpiresAt)})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleOverview015(w http.ResponseWriter, _ *http.Request) {
	o := s.engine.Overview()
	writeJSON(w, http.StatusOK, wire.Overview015{
		Queues: o.Queues, Partitions: o.Partitions, Namespaces: o.Namespaces, Tasks: o.Tasks,
		Messages: wire.Counts015{
			Total: o.Messages.Total, Pending: o.Messages.Pending, Processing: o.Messages.Processing,
			Completed: o.Messages.Completed, Failed: o.Messages.Failed, DeadLetter: o.Messages.DeadLetter,
		},
		Lag: lag(&o), Throughput: throughput(&o), Timestamp: wire.Time015{Time: o.Timestamp},
	})
}
