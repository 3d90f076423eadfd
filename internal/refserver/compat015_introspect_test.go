package refserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queenmq/queen-go/internal/testutil"
)

// captureState015 rebuilds the state of the introspection captures, step by step as they were
// taken, on a 0.15-mode broker, and reads it 25 s after the first push.
// It returns the client and p0's partition id.
func captureState015(t *testing.T) (*testServer, *testutil.Client, map[string]string) {
	t.Helper()
	srv, c := start(t, withCompat("0.15"), withManualClock())
	const q = "spec-insp-115691"
	c.Post("/api/v1/configure", map[string]any{"queue": q, "namespace": "spec-ns", "task": "spec-task",
		"options": map[string]any{"leaseTime": 600, "retryLimit": 1, "deadLetterQueue": true}}).Want(t, http.StatusOK, nil)
	c.Post("/api/v1/configure", map[string]any{"queue": q + "-empty", "namespace": "spec-ns", "task": "spec-task-2"}).Want(t, http.StatusOK, nil)
	push := func(items ...testutil.Item) {
		t.Helper()
		c.Post("/api/v1/push", map[string]any{"items": items}).Want(t, http.StatusOK, nil)
	}
	var items []testutil.Item
	for _, p := range []struct {
		name string
		n    int
	}{{"p0", 4}, {"p1", 3}, {"p2", 2}} { // in the captured order, which orders equal times
		for i := range p.n {
			items = append(items, testutil.Item{Queue: q, Partition: p.name, Payload: map[string]any{"p": p.name, "i": i}, TransactionID: fmt.Sprintf("%s-%d", p.name, i)})
		}
	}
	push(items...)
	pop := func(partition, group, mode string, batch int) *testutil.PopResult {
		t.Helper()
		params := url.Values{"batch": {itoa(batch)}}
		if group != "" {
			params.Set("consumerGroup", group)
			params.Set("subscriptionMode", mode)
		}
		return c.Pop("/api/v1/pop/queue/"+q+"/partition/"+partition, params)
	}
	ids := map[string]string{}
	note := func(r *testutil.PopResult) *testutil.PopResult { ids[r.Partition] = r.PartitionID; return r }
	note(pop("p2", "spec-gC", "new", 10))                                                      // gC starts new
	c.AckAll(note(pop("p0", "spec-gB", "all", 2)), "spec-gB", "completed")                     // gB reads two of p0
	note(pop("p1", "spec-gB", "all", 2))                                                       // and holds p1
	c.AckAll(pop("p0", "", "", 1), "", "failed")                                               // queue mode fails p0-0
	c.AckAll(pop("p0", "", "", 1), "", "failed")                                               // twice: a dead letter
	pop("p0", "", "", 2)                                                                       // and holds p0
	r := pop("p2", "spec-gA", "all", 10)                                                       // gA reads p2
	c.AckBatch(map[string]any{"consumerGroup": "spec-gA", "acknowledgments": []map[string]any{ // one done, one filed
		{"transactionId": "p2-0", "partitionId": r.PartitionID, "leaseId": r.LeaseID, "status": "completed"},
		{"transactionId": "p2-1", "partitionId": r.PartitionID, "leaseId": r.LeaseID, "status": "dlq"},
	}})
	srv.Advance(3407 * time.Millisecond)                                                                              // as captured
	push(testutil.Item{Queue: q, Partition: "p0", Payload: map[string]any{"p": "p0", "i": 4}, TransactionID: "p0-4"}, // two more, 3 s later
		testutil.Item{Queue: q, Partition: "p2", Payload: map[string]any{"p": "p2", "i": 2}, TransactionID: "p2-2"})
	for _, p := range []string{"p0", "p1", "p2"} { // gA finishes everything
		c.AckAll(pop(p, "spec-gA", "all", 10), "spec-gA", "completed")
	}
	srv.Advance(25*time.Second - 3407*time.Millisecond)
	return srv, c, ids
}

// sameShape reports where got's structure differs from want's: the same keys at every level
// and the same JSON type wherever neither value is null (which values are null depends on the
// state, which the capture's broker and this one reach by different clocks).
func sameShape(path string, want, got any) []string {
	if want == nil || got == nil {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, path+"."+k+": missing")
				continue
			}
			diffs = append(diffs, sameShape(path+"."+k, wv, gv)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, path+"."+k+": not in the 0.15 answer")
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array", path, got)}
		}
		var diffs []string
		for i, gv := range g {
			for _, wv := range w {
				diffs = append(diffs, sameShape(fmt.Sprintf("%s[%d]", path, i), wv, gv)...)
			}
		}
		return diffs
	}
	if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
		return []string{fmt.Sprintf("%s: %T, want %T", path, got, want)}
	}
	return nil
}

func decodeAny(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: not JSON: %q", what, b)
	}
	return v
}

// wantLike checks an answer's status and shape against capture id; elem compares each element
// of an array answer (or each member of an object answer) with the capture, an excerpt of one.
func wantLike(t *testing.T, id string, got testutil.Response, elem bool) {
	t.Helper()
	if got.Status != http.StatusOK {
		t.Errorf("%s: status %d, want 200 (%s)", id, got.Status, got.Body)
		return
	}
	want, g := decodeAny(t, id, []byte(introspection015[id])), decodeAny(t, id, got.Body)
	var diffs []string
	switch {
	case elem && id == "group-queue-mode": // one member of the detail object
		diffs = sameShape(id, want, g)
	case elem:
		arr, ok := g.([]any)
		if !ok || len(arr) == 0 {
			t.Errorf("%s: want a non-empty array, got %s", id, got.Body)
			return
		}
		diffs = sameShape(id, []any{want}, arr)
	default:
		diffs = sameShape(id, want, g)
	}
	slices.Sort(diffs)
	diffs = slices.Compact(diffs)
	for _, d := range diffs {
		t.Errorf("%s\n body: %s", d, got.Body)
	}
}

func Test015IntrospectionMatchesTheCapturedShapes(t *testing.T) {
	t.Parallel()
	_, c, ids := captureState015(t)
	p0 := ids["p0"]
	for _, tc := range []struct {
		id, path string
		elem     bool
	}{
		{"queues-by-namespace", "/api/v1/status/queues?namespace=spec-ns", false},
		{"queue-detail", "/api/v1/status/queues/spec-insp-115691", false},
		{"groups", "/api/v1/consumer-groups", true},
		{"group-gB-lagging", "/api/v1/consumer-groups/spec-gB", false},
		{"group-gC-new-start", "/api/v1/consumer-groups/spec-gC", false},
		{"group-queue-mode", "/api/v1/consumer-groups/__QUEUE_MODE__", true},
		{"lagging-min-0", "/api/v1/consumer-groups/lagging?minLagSeconds=0", true},
		{"messages", "/api/v1/messages?queue=spec-insp-115691", false},
		{"message-dead-lettered-in-queue-mode", "/api/v1/messages/" + p0 + "/p0-0", false},
		{"message-done-by-gA-leased-by-gB", "/api/v1/messages/" + ids["p1"] + "/p1-0", false},
		{"message-p0-1-after-lease-expiry", "/api/v1/messages/" + p0 + "/p0-1", false},
		{"overview", "/api/v1/resources/overview", false},
	} {
		wantLike(t, tc.id, c.Get(tc.path), tc.elem)
	}
}

func Test015IntrospectionStatusesAndBodies(t *testing.T) {
	t.Parallel()
	_, c, ids := captureState015(t)
	p0 := ids["p0"]
	for _, tc := range []struct {
		what, method, path string
		status             int
		body               string // "" is an empty body
	}{
		{"detail of an unknown queue", "GET", "/api/v1/status/queues/spec-insp-nope", 200, introspection015["queue-detail-unknown"]},
		{"escaped queue name", "GET", "/api/v1/status/queues/spec%2Dinsp%2D115691", 200, introspection015["queue-name-escaped"]},
		{"unknown group", "GET", "/api/v1/consumer-groups/spec-nobody", 200, ""},
		{"escaped group name", "GET", "/api/v1/consumer-groups/spec%2DgB", 200, ""},
		{"empty lagging list", "GET", "/api/v1/consumer-groups/lagging", 200, ""},
		{"minLagSeconds=abc", "GET", "/api/v1/consumer-groups/lagging?minLagSeconds=abc", 500, `{"error":"stoi"}`},
		{"browse of an unknown queue", "GET", "/api/v1/messages?queue=spec-insp-nope", 200, introspection015["messages-unknown-queue"]},
		{"from in the future", "GET", "/api/v1/messages?queue=spec-insp-115691&from=2030-01-01T00:00:00Z", 200, introspection015["messages-from-future"]},
		{"from=garbage", "GET", "/api/v1/messages?queue=spec-insp-115691&from=garbage", 200, introspection015["messages-from-garbage"]},
		{"unknown message", "GET", "/api/v1/messages/" + p0 + "/nope", 200, introspection015["message-unknown"]},
		{"escaped transactionId", "GET", "/api/v1/messages/" + p0 + "/p0%2D1", 200, introspection015["message-id-escaped"]},
		{"partitionId not a UUID", "GET", "/api/v1/messages/not-a-uuid/p0-0", 200, introspection015["message-partition-not-uuid"]},
		{"message by transactionId alone", "GET", "/api/v1/messages/p0-0", 404, introspection015["message-by-transaction-id-only"]},
		{"POST on a read route", "POST", "/api/v1/consumer-groups/lagging", 404, introspection015["post-on-read-route"]},
	} {
		body := ""
		if tc.method == "POST" {
			body = "{}"
		}
		got := c.Do(tc.method, tc.path, body)
		if got.Status != tc.status || string(got.Body) != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.what, got.Status, got.Body, tc.status, tc.body)
		}
	}
	for _, path := range []string{"/api/v1/messages?queue=spec-insp-115691&limit=-1", "/api/v1/status/queues?namespace=spec-ns&limit=-1"} {
		got := c.Get(path) // PostgreSQL's refusal, as a 200
		var f struct {
			Error   string `json:"error"`
			Success *bool  `json:"success"`
		}
		got.Want(t, http.StatusOK, &f)
		if !strings.HasPrefix(f.Error, "ERROR:  LIMIT must not be negative") || f.Success == nil || *f.Success {
			t.Errorf("%s: %s, want 0.15's SQL error", path, got.Body)
		}
	}
}

// The 0.15 answers' contents where they differ from 2.0's.
func Test015IntrospectionContents(t *testing.T) {
	t.Parallel()
	_, c, ids := captureState015(t)

	var list map[string]any
	c.Get("/api/v1/status/queues").Want(t, http.StatusOK, &list)
	testutil.WantKeys(t, "queue list", list, "pagination", "queues") // no total

	var detail struct {
		Partitions []struct {
			Name     string           `json:"name"`
			Messages map[string]int64 `json:"messages"`
		} `json:"partitions"`
	}
	c.Get("/api/v1/status/queues/spec-insp-115691").Want(t, http.StatusOK, &detail)
	for _, p := range detail.Partitions {
		if p.Messages["failed"] != 0 {
			t.Errorf("%s: failed %d, want 0.15's constant 0", p.Name, p.Messages["failed"])
		}
	}

	var groups []map[string]any
	c.Get("/api/v1/consumer-groups?queue=elsewhere").Want(t, http.StatusOK, &groups) // no filter
	byName := map[string]map[string]any{}
	for _, g := range groups {
		byName[g["name"].(string)] = g
		if g["totalLag"] != nil {
			t.Errorf("%s: totalLag %v, want null", g["name"], g["totalLag"])
		}
	}
	if len(byName) != 4 {
		t.Fatalf("groups %v, want spec-gA, spec-gB, spec-gC and queue mode", groups)
	}
	if byName["spec-gA"]["subscriptionMode"] != nil || byName["spec-gC"]["subscriptionMode"] != "new" {
		t.Errorf("subscriptionMode: gA %v, gC %v; want null for an all start, new", byName["spec-gA"]["subscriptionMode"], byName["spec-gC"]["subscriptionMode"])
	}
	if byName["spec-gB"]["members"] != 2.0 || byName["__QUEUE_MODE__"]["members"] != 1.0 {
		t.Errorf("members: gB %v, queue mode %v; want the partitions with a cursor row, 2 and 1", byName["spec-gB"]["members"], byName["__QUEUE_MODE__"]["members"])
	}

	partitionsOf := func(group string) []string {
		var d map[string]struct {
			Partitions []struct {
				Partition string `json:"partition"`
			} `json:"partitions"`
		}
		c.Get("/api/v1/consumer-groups/"+group+"?queue=elsewhere").Want(t, http.StatusOK, &d)
		var names []string
		for _, p := range d["spec-insp-115691"].Partitions {
			names = append(names, p.Partition)
		}
		return names
	}
	for group, want := range map[string][]string{
		"spec-gB": {"p0", "p1"}, "__QUEUE_MODE__": {"p0"}, "spec-gC": {"p0", "p1", "p2"}, // as captured
	} {
		if got := partitionsOf(group); !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want the partitions with a cursor row %v", group, got, want)
		}
	}

	var gA map[string]struct {
		Partitions []struct {
			TotalConsumed  int64   `json:"totalConsumed"`
			LastConsumedAt *string `json:"lastConsumedAt"`
		} `json:"partitions"`
	}
	c.Get("/api/v1/consumer-groups/spec-gA").Want(t, http.StatusOK, &gA) // totalConsumed counts completed acks only
	var consumed []int64
	for _, p := range gA["spec-insp-115691"].Partitions {
		consumed = append(consumed, p.TotalConsumed)
		if p.LastConsumedAt == nil {
			t.Errorf("spec-gA: lastConsumedAt null after its acks")
		}
	}
	if !slices.Equal(consumed, []int64{5, 3, 2}) {
		t.Errorf("spec-gA totalConsumed %v, want the captured [5 3 2]: a dead letter counts 0", consumed)
	}

	var lagging []map[string]any
	c.Get("/api/v1/consumer-groups/lagging?minLagSeconds=-5&queue=elsewhere").Want(t, http.StatusOK, &lagging) // no filters, and a negative minimum
	// As captured: spec-gC's rows on p0 and p1, which its partition pop on p2 seeded, count
	// the messages older than its start.
	if len(lagging) != 6 {
		t.Errorf("lagging: %d entries, want 6", len(lagging))
	}

	var browse struct {
		Messages []struct {
			TransactionID string `json:"transactionId"`
			CreatedAt     string `json:"createdAt"`
		} `json:"messages"`
	}
	c.Get("/api/v1/messages?queue=spec-insp-115691&partition=p0&order=asc&fromOffset=0&payload=true").Want(t, http.StatusOK, &browse)
	var txs []string
	for _, m := range browse.Messages {
		txs = append(txs, m.TransactionID)
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", m.CreatedAt); err != nil {
			t.Errorf("createdAt %q: want milliseconds", m.CreatedAt)
		}
	}
	if want := []string{"p0-4", "p0-3", "p0-2", "p0-1", "p0-0"}; !slices.Equal(txs, want) {
		t.Errorf("browse %v, want newest first whatever order says: %v", txs, want)
	}
	for path, want := range map[string]int{
		"/api/v1/messages?ns=spec-ns&partition=p1":                        3, // ns filters
		"/api/v1/messages?namespace=other&queue=spec-insp-115691&limit=2": 2, // namespace is no filter
		"/api/v1/messages?queue=spec-insp-115691&limit=0":                 0, // limit 0 lists nothing
		"/api/v1/messages?queue=spec-insp-115691&limit=abc&partition=p2":  3, // a limit that does not parse is the default
		"/api/v1/messages?queue=spec-insp-115691&status=failed":           0, // failed is no status
	} {
		c.Get(path).Want(t, http.StatusOK, &browse)
		if len(browse.Messages) != want {
			t.Errorf("%s: %d messages, want %d", path, len(browse.Messages), want)
		}
	}

	var msg struct {
		ConsumerGroups []map[string]any `json:"consumerGroups"`
	}
	c.Get("/api/v1/messages/"+ids["p2"]+"/p2-1").Want(t, http.StatusOK, &msg) // dead-lettered by gA
	var names []string
	for _, g := range msg.ConsumerGroups {
		names = append(names, g["name"].(string))
		testutil.WantKeys(t, "message group", g, "consumed", "leaseExpiresAt", "name")
	}
	if !slices.Equal(names, []string{"spec-gA", "spec-gC"}) {
		t.Errorf("p2-1's groups %v, want those with a cursor row on p2", names)
	}
}

// Messages older than an hour are not listed unless from says so.
func Test015BrowseFromDefaultsToAnHourAgo(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withCompat("0.15"), withManualClock())
	c.Post("/api/v1/push", map[string]any{"items": []testutil.Item{{Queue: "old", Payload: 1}}}).Want(t, http.StatusOK, nil)
	srv.Advance(61 * time.Minute)
	var browse struct {
		Messages []any `json:"messages"`
	}
	c.Get("/api/v1/messages?queue=old").Want(t, http.StatusOK, &browse)
	if len(browse.Messages) != 0 {
		t.Errorf("a 61-minute-old message is listed by default: %v", browse.Messages)
	}
	c.Get("/api/v1/messages?queue=old&from=1970-01-01T00:00:00Z").Want(t, http.StatusOK, &browse)
	if len(browse.Messages) != 1 {
		t.Errorf("from=1970 lists %d messages, want 1", len(browse.Messages))
	}
}

// An expired lease's id stays in workerId while leaseActive turns false.
func Test015WorkerIDOutlivesTheLease(t *testing.T) {
	t.Parallel()
	srv, c := start(t, withCompat("0.15"), withManualClock())
	c.Post("/api/v1/push", map[string]any{"items": []testutil.Item{{Queue: "q", Partition: "p", Payload: 1}}}).Want(t, http.StatusOK, nil)
	r := c.MustPop("/api/v1/pop/queue/q/partition/p", url.Values{"consumerGroup": {"g"}, "subscriptionMode": {"all"}})
	srv.Advance(301 * time.Second) // past 0.15's default lease of 300 s
	var d map[string]struct {
		Partitions []struct {
			LeaseActive bool    `json:"leaseActive"`
			WorkerID    *string `json:"workerId"`
		} `json:"partitions"`
	}
	c.Get("/api/v1/consumer-groups/g").Want(t, http.StatusOK, &d)
	p := d["q"].Partitions
	if len(p) != 1 || p[0].LeaseActive || p[0].WorkerID == nil || *p[0].WorkerID != r.LeaseID {
		t.Fatalf("after expiry: %+v, want leaseActive false and workerId %s", p, r.LeaseID)
	}
	c.AckAll(c.MustPop("/api/v1/pop/queue/q/partition/p", url.Values{"consumerGroup": {"g"}}), "g", "completed")
	c.Get("/api/v1/consumer-groups/g").Want(t, http.StatusOK, &d)
	if p := d["q"].Partitions; len(p) != 1 || p[0].WorkerID != nil {
		t.Errorf("after the acks released the lease: %+v, want workerId null", p)
	}
}
