package queen

import "strings"

// The broker's route patterns, as Hooks.Request reports them: names are placeholders, so a
// metric labelled by route stays small whatever the queues are called.
const (
	routePush           = "/api/v1/push"
	routeAck            = "/api/v1/ack"
	routeAckBatch       = "/api/v1/ack/batch"
	routeTransaction    = "/api/v1/transaction"
	routeRenew          = "/api/v1/lease/{leaseId}/extend"
	routePopDiscovery   = "/api/v1/pop"
	routePopQueue       = "/api/v1/pop/queue/{queue}"
	routePopPartition   = "/api/v1/pop/queue/{queue}/partition/{partition}"
	routeHealth         = "/health"
	routeUnknownPattern = "/{unknown}"
)

// knownRoutes are the patterns a path sent through Client.Do is matched against. A literal
// segment wins over a placeholder, so /api/v1/consumer-groups/lagging is not a group name.
var knownRoutes = splitRoutes(
	routeHealth,
	routePush, routeAck, routeAckBatch, routeTransaction, routeRenew,
	routePopDiscovery, routePopQueue, routePopPartition,
	"/api/v1/configure",
	"/api/v1/dlq",
	"/api/v1/dlq/{id}",
	"/api/v1/dlq/{id}/replay",
	"/api/v1/messages",
	"/api/v1/messages/{partitionId}/{transactionId}",
	"/api/v1/consumer-groups",
	"/api/v1/consumer-groups/lagging",
	"/api/v1/consumer-groups/{group}",
	"/api/v1/consumer-groups/{group}/queues/{queue}",
	"/api/v1/consumer-groups/{group}/queues/{queue}/seek",
	"/api/v1/resources/overview",
	"/api/v1/resources/namespaces",
	"/api/v1/resources/tasks",
	"/api/v1/resources/queues",
	"/api/v1/resources/queues/{queue}",
	"/api/v1/status",
	"/api/v1/status/buffers",
	"/api/v1/status/analytics",
	"/api/v1/status/queues",
	"/api/v1/status/queues/{queue}",
	"/api/v1/status/queues/{queue}/messages",
	"/api/v1/stats/refresh",
)

type routePattern struct {
	pattern  string
	segments []string
}

func splitRoutes(patterns ...string) []routePattern {
	out := make([]routePattern, len(patterns))
	for i, p := range patterns {
		out[i] = routePattern{pattern: p, segments: strings.Split(strings.TrimPrefix(p, "/"), "/")}
	}
	return out
}

// routePatternOf finds the pattern of an escaped path. A path no pattern fits keeps its first two
// segments (/api/v1) and stands for the rest with {unknown}, so that no name leaks into it.
func routePatternOf(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	best, bestLiterals := "", -1
	for _, r := range knownRoutes {
		if len(r.segments) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, s := range r.segments {
			if strings.HasPrefix(s, "{") {
				ok = segs[i] != ""
			} else {
				ok = s == segs[i]
				literals++
			}
			if !ok {
				break
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = r.pattern, literals
		}
	}
	if best != "" {
		return best
	}
	if len(segs) > 2 && segs[0] == "api" {
		return "/" + segs[0] + "/" + segs[1] + routeUnknownPattern
	}
	return routeUnknownPattern
}

// popRoute is the pattern of the builder's pop (see popPath).
func (b QueueBuilder) popRoute() string {
	switch {
	case b.discovery():
		return routePopDiscovery
	case b.partition != "":
		return routePopPartition
	default:
		return routePopQueue
	}
}
