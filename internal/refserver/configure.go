package refserver

import (
	"net/http"

	"github.com/queenmq/queen-go/internal/broker"
	"github.com/queenmq/queen-go/internal/wire"
)

// handleConfigure creates or reconfigures a queue, echoing every option.
func (s *Server) handleConfigure(w http.ResponseWriter, r *http.Request) {
	req, err := decodeConfigure(w, r)
	if err != nil {
		writeFailure(w, err)
		return
	}
	res := s.engine.Configure(req)
	options := make(map[string]wire.Value, len(res.Options))
	for k, v := range res.Options {
		options[k] = v
	}
	writeJSON(w, http.StatusOK, wire.ConfigureAnswer{
		Configured:  true,
		QueueID:     res.QueueID,
		PartitionID: res.PartitionID,
		Queue:       res.Queue,
		Namespace:   res.Namespace,
		Task:        res.Task,
		Options:     wire.QueueOptions{Other: options}, // every option as the engine echoes it
	})
}

func decodeConfigure(w http.ResponseWriter, r *http.Request) (broker.ConfigureRequest, error) {
	var req broker.ConfigureRequest
	o, err := readObject(w, r)
	if err != nil {
		return req, err
	}
	queue, ok, err := o.str("queue")
	if err != nil {
		return req, err
	}
	if !ok || queue == "" {
		return req, badRequest("queue is required")
	}
	if err := checkName("queue", queue); err != nil {
		return req, err
	}
	req.Queue = queue
	if req.Namespace, _, err = o.str("namespace"); err != nil {
		return req, err
	}
	if req.Task, _, err = o.str("task"); err != nil {
		return req, err
	}
	if !o.present("options") {
		return req, nil
	}
	opts, err := asObject(o.raw("options"), "options")
	if err != nil {
		return req, err
	}
	for _, name := range []string{"leaseTime", "retryLimit"} {
		n, ok, err := opts.integer(name)
		if err != nil {
			return req, badRequest("options.%s", err.Error())
		}
		if !ok {
			continue
		}
		if n < 0 {
			return req, badRequest("options.%s must be an integer of at least 0, got %d", name, n)
		}
		v := int(n)
		if name == "leaseTime" {
			req.LeaseTime = &v
		} else {
			req.RetryLimit = &v
		}
	}
	dlq, ok, err := opts.boolean("deadLetterQueue")
	if err != nil {
		return req, badRequest("options.%s", err.Error())
	}
	if ok {
		req.DeadLetterQueue = &dlq
	}
	req.Options = opts.toMap()
	return req, nil
}

const maxInt32 = 1<<31 - 1
