// Package route is the broker's route table: every route the SDK calls and the reference broker
// serves, with its method, its pattern, what kind of operation it is, and which broker
// generations serve it. The SDK builds its paths and names its request events from it, the
// reference broker registers its handlers from it, and fault injection matches requests with it,
// so that a route is spelled once.
package route

import (
	"net/url"
	"strings"
)

// Op is the kind of operation a route performs, as request hooks and metrics name it.
type Op string

// The operations. Everything that is not consuming or producing is Admin.
const (
	OpPop         Op = "pop"
	OpAck         Op = "ack"
	OpPush        Op = "push"
	OpRenew       Op = "renew"
	OpTransaction Op = "transaction"
	OpAdmin       Op = "admin"
)

// Family is the group of routes a test fault can name: every pop route is "pop", both ack
// routes are "ack". Routes outside these families have none.
type Family string

// The fault families.
const (
	FamilyPush        Family = "push"
	FamilyPop         Family = "pop"
	FamilyAck         Family = "ack"
	FamilyExtend      Family = "extend"
	FamilyTransaction Family = "transaction"
)

// Route is one route of the broker's HTTP API.
type Route struct {
	Method  string // GET, POST or DELETE
	Pattern string // the path with placeholders: /api/v1/pop/queue/{queue}
	Op      Op
	Family  Family // "" for routes no fault names
	V20     bool   // served by a 2.0 broker
	V015    bool   // served by a 0.15 broker
}

// Mux is the route as a net/http ServeMux pattern: "GET /api/v1/pop/queue/{queue}".
func (r Route) Mux() string { return r.Method + " " + r.Pattern }

// Path is the route's path with each placeholder, in order, replaced by one escaped name. It
// panics when the number of names is not the number of placeholders: that is a programming
// error, never a user's.
func (r Route) Path(names ...string) string {
	if len(names) == 0 && !strings.Contains(r.Pattern, "{") {
		return r.Pattern
	}
	var b strings.Builder
	rest, i := r.Pattern, 0
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if i >= len(names) {
			panic("route: too few names for " + r.Pattern)
		}
		b.WriteString(rest[:open])
		b.WriteString(url.PathEscape(names[i]))
		i++
		rest = rest[open+end+1:]
	}
	if i != len(names) {
		panic("route: too many names for " + r.Pattern)
	}
	return b.String()
}

// The routes. The 0.15-only ones are served by 0.15 brokers alone; a 2.0 broker answers them 404.
var (
	Health = Route{"GET", "/health", OpAdmin, "", true, true}

	Push         = Route{"POST", "/api/v1/push", OpPush, FamilyPush, true, true}
	PopQueue     = Route{"GET", "/api/v1/pop/queue/{queue}", OpPop, FamilyPop, true, true}
	PopPartition = Route{"GET", "/api/v1/pop/queue/{queue}/partition/{partition}", OpPop, FamilyPop, true, true}
	PopDiscovery = Route{"GET", "/api/v1/pop", OpPop, FamilyPop, true, false}
	Ack          = Route{"POST", "/api/v1/ack", OpAck, FamilyAck, true, true}
	AckBatch     = Route{"POST", "/api/v1/ack/batch", OpAck, FamilyAck, true, true}
	Extend       = Route{"POST", "/api/v1/lease/{leaseId}/extend", OpRenew, FamilyExtend, true, true}
	Transaction  = Route{"POST", "/api/v1/transaction", OpTransaction, FamilyTransaction, true, true}

	Configure          = Route{"POST", "/api/v1/configure", OpAdmin, "", true, true}
	DeadLetters        = Route{"GET", "/api/v1/dlq", OpAdmin, "", true, true}
	ReplayDeadLetter   = Route{"POST", "/api/v1/dlq/{id}/replay", OpAdmin, "", true, false}
	DeleteDeadLetter   = Route{"DELETE", "/api/v1/dlq/{id}", OpAdmin, "", true, false}
	Seek               = Route{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/seek", OpAdmin, "", true, true}
	DeleteGroup        = Route{"DELETE", "/api/v1/consumer-groups/{group}", OpAdmin, "", true, true}
	DeleteGroupOnQueue = Route{"DELETE", "/api/v1/consumer-groups/{group}/queues/{queue}", OpAdmin, "", true, true}
	DeleteQueue        = Route{"DELETE", "/api/v1/resources/queues/{queue}", OpAdmin, "", true, true}

	QueueList   = Route{"GET", "/api/v1/status/queues", OpAdmin, "", true, true}
	QueueDetail = Route{"GET", "/api/v1/status/queues/{queue}", OpAdmin, "", true, true}
	GroupList   = Route{"GET", "/api/v1/consumer-groups", OpAdmin, "", true, true}
	Lagging     = Route{"GET", "/api/v1/consumer-groups/lagging", OpAdmin, "", true, true}
	GroupDetail = Route{"GET", "/api/v1/consumer-groups/{group}", OpAdmin, "", true, true}
	Messages    = Route{"GET", "/api/v1/messages", OpAdmin, "", true, true}
	Message     = Route{"GET", "/api/v1/messages/{partitionId}/{transactionId}", OpAdmin, "", true, true}
	Overview    = Route{"GET", "/api/v1/resources/overview", OpAdmin, "", true, true}

	ResourceQueues  = Route{"GET", "/api/v1/resources/queues", OpAdmin, "", false, true}
	ResourceQueue   = Route{"GET", "/api/v1/resources/queues/{queue}", OpAdmin, "", false, true}
	Namespaces      = Route{"GET", "/api/v1/resources/namespaces", OpAdmin, "", false, true}
	Tasks           = Route{"GET", "/api/v1/resources/tasks", OpAdmin, "", false, true}
	Status          = Route{"GET", "/api/v1/status", OpAdmin, "", false, true}
	StatusBuffers   = Route{"GET", "/api/v1/status/buffers", OpAdmin, "", false, true}
	StatusAnalytics = Route{"GET", "/api/v1/status/analytics", OpAdmin, "", false, true}
	QueueMessages   = Route{"GET", "/api/v1/status/queues/{queue}/messages", OpAdmin, "", false, true}
	StatsRefresh    = Route{"POST", "/api/v1/stats/refresh", OpAdmin, "", false, true}
)

// All is every route, in the order of the table above.
var All = []Route{
	Health,
	Push, PopQueue, PopPartition, PopDiscovery, Ack, AckBatch, Extend, Transaction,
	Configure, DeadLetters, ReplayDeadLetter, DeleteDeadLetter, Seek, DeleteGroup, DeleteGroupOnQueue, DeleteQueue,
	QueueList, QueueDetail, GroupList, Lagging, GroupDetail, Messages, Message, Overview,
	ResourceQueues, ResourceQueue, Namespaces, Tasks, Status, StatusBuffers, StatusAnalytics, QueueMessages, StatsRefresh,
}

// Unknown is the pattern of a path that fits no route under /api/v1; Match never returns a
// concrete path, so that no queue or group name leaks into a metric label.
const (
	Unknown    = "/api/v1/{unknown}"
	UnknownAny = "/{unknown}"
)

type compiled struct {
	route    Route
	segments []string
	literals int
}

var table = func() []compiled {
	out := make([]compiled, len(All))
	for i, r := range All {
		segs := strings.Split(strings.TrimPrefix(r.Pattern, "/"), "/")
		n := 0
		for _, s := range segs {
			if !strings.HasPrefix(s, "{") {
				n++
			}
		}
		out[i] = compiled{route: r, segments: segs, literals: n}
	}
	return out
}()

// Match finds the route of a request by its method and escaped path. Of the patterns the path
// fits, the one with the most literal segments wins, so that /api/v1/consumer-groups/lagging is
// not a group named "lagging"; of the routes with that pattern, the one with the request's
// method (any, when none has it: the broker then answers 405). A path no pattern fits is
// reported as Unknown (or UnknownAny outside /api/v1) and false.
func Match(method, path string) (Route, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	best := -1
	for i, c := range table {
		if len(c.segments) != len(segs) || !fits(c.segments, segs) {
			continue
		}
		switch {
		case best < 0, c.literals > table[best].literals:
			best = i
		case c.route.Pattern == table[best].route.Pattern && c.route.Method == method:
			best = i
		}
	}
	if best >= 0 {
		return table[best].route, true
	}
	if len(segs) > 2 && segs[0] == "api" && segs[1] == "v1" {
		return Route{Pattern: Unknown, Op: OpAdmin}, false
	}
	return Route{Pattern: UnknownAny, Op: OpAdmin}, false
}

func fits(pattern, segs []string) bool {
	for j, s := range pattern {
		if strings.HasPrefix(s, "{") {
			if segs[j] == "" {
				return false
			}
		} else if s != segs[j] {
			return false
		}
	}
	return true
}

// IsAPI reports whether path is under /api/v1, where the broker asks for the token.
func IsAPI(path string) bool { return path == "/api/v1" || strings.HasPrefix(path, "/api/v1/") }
