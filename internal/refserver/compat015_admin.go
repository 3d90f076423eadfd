package refserver

// Configure, the dead-letter list, seek and deletions on 0.15. What differs from 2.0: a
// configure echoes every option, at its 0.15 default where the request leaves it out; the
// dead-letter list has no total, names each entry by its message's id, ignores partition and
// time filters, and answers an offset above 0 with its NULL result; a seek's unparsable timestamp is a 200
// failure and a non-string one a 500, an unknown queue moving nothing; deleting an unknown
// group or queue is a 200; names are not checked.

import (
	"errors"
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleConfigure015 answers a configure as 0.15 does: every option is echoed, what the
// request leaves out at its 0.15 default (leaseTime 300, deadLetterQueue false, which the
// engine then ignores: dead letters are filed whatever it says).
func (s *Server) handleConfigure015(w http.ResponseWriter, r *http.Request) {
	req, err := decodeConfigure(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	opts := wire.DefaultOptions015()
	if len(req.Options) > 0 {
		sent := make(map[string]wire.Value, len(req.Options))
		for k, v := range req.Options {
			sent[k] = wire.Value(v)
		}
		raw, err := wire.Marshal(sent)
		if err == nil {
			err = wire.Unmarshal(raw, &opts)
		}
		if err != nil {
			writeTypeError015(w, "options", "the option's type")
			return
		}
	}
	res := s.engine.Configure(req)
	writeJSON(w, http.StatusOK, wire.Configure015{
		Configured: true, Namespace: res.Namespace, Options: opts, PartitionID: res.PartitionID,
		Queue: res.Queue, QueueID: res.QueueID, Task: res.Task,
	})
}

// handleDLQList015 lists dead letters as 0.15 does: each entry's id is its message's id;
// there is no messageId and no total; partition, from and to are ignored; limit caps nothing
// and an offset above 0 is {"success":true,"value":null}.
func (s *Server) handleDLQList015(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	limit, offset := q.laxInt("limit", defaultDLQLimit), q.laxInt("offset", 0)
	if offset > 0 { // the page past the one 0.15's SQL builds is its NULL
		writeNull015(w)
		return
	}
	out := wire.DeadLetters015{Messages: []wire.DeadLetter015{}, Pagination: wire.Pagination{Limit: limit, Offset: offset}}
	list, _ := s.engine.DeadLetters(broker.DLQQuery{Queue: q.get("queue"), Group: q.get("consumerGroup"), Limit: maxInt32})
	for _, d := range list {
		out.Messages = append(out.Messages, wire.DeadLetter015{
			ConsumerGroup: d.ConsumerGroup, CreatedAt: wire.Time015{Time: d.CreatedAt}, Data: dataOr(d.Data, "null"),
			ErrorMessage: d.ErrorMessage, FailedAt: wire.Time015{Time: d.FailedAt}, ID: d.MessageID,
			Partition: d.Partition, PartitionID: d.PartitionID, Queue: d.Queue,
			RetryCount: d.RetryCount, TransactionID: d.TransactionID,
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleSeek015 answers a seek as 0.15 does: an unparsable timestamp is a 200 failure,
// a non-string one a 500, and an unknown queue moves nothing.
func (s *Server) handleSeek015(w http.ResponseWriter, r *http.Request) {
	group, queue := r.PathValue("group"), r.PathValue("queue")
	o, err := readObject(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	toEnd, _, err := o.boolean("toEnd")
	if err != nil {
		writeTypeError015(w, "toEnd", "boolean")
		return
	}
	ts, hasTS, err := o.str("timestamp")
	if err != nil {
		writeTypeError015(w, "timestamp", "string")
		return
	}
	if !toEnd && !hasTS {
		WriteError(w, http.StatusBadRequest, "Must specify either 'toEnd': true or 'timestamp'")
		return
	}
	out := wire.Seek015{ConsumerGroup: group, QueueName: queue, SeekToEnd: toEnd, Success: true}
	var at wire.Time015
	if !toEnd {
		if at.Time, err = parseTime(ts); err != nil {
			writeFailure015(w, `ERROR:  invalid input syntax for type timestamp with time zone: "`+ts+`"`)
			return
		}
		out.TargetTimestamp = &at
	}
	res, err := s.engine.Seek(group, queue, toEnd, at.Time)
	if err != nil {
		writeFailure015(w, err.Error())
		return
	}
	out.PartitionsUpdated = res.PartitionsUpdated
	writeJSON(w, http.StatusOK, out)
}

// handleDeleteGroup015 deletes a group as 0.15 does: an unknown one is a 200 with
// deletedPartitions 0.
func (s *Server) handleDeleteGroup015(w http.ResponseWriter, r *http.Request) {
	group, queue := r.PathValue("group"), r.PathValue("queue")
	qv, err := parseQuery(r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	deleteMetadata := qv.laxBool("deleteMetadata", true)
	n, err := s.engine.DeleteGroup(group, queue, deleteMetadata)
	if err != nil && !errors.Is(err, broker.ErrGroupNotFound) {
		writeFailure015(w, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, wire.DeleteGroupAnswer{ConsumerGroup: group, DeletedPartitions: &n,
		MetadataDeleted: deleteMetadata, QueueName: queue, Success: true})
}

// handleDeleteQueue015 deletes a queue as 0.15 does: an unknown one is a 200 with
// existed false.
func (s *Server) handleDeleteQueue015(w http.ResponseWriter, r *http.Request) {
	queue := r.PathValue("queue")
	err := s.engine.DeleteQueue(queue)
	if err != nil && !errors.Is(err, broker.ErrQueueNotFound) {
		writeFailure015(w, err.Error())
		return
	}
	existed := err == nil
	writeJSON(w, http.StatusOK, wire.DeleteQueueAnswer{Deleted: true, Existed: &existed, Queue: queue})
}
