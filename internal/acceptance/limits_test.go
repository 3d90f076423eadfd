package acceptance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("names", func(t *testing.T) {
		b := start(t)
		bad := []string{strings.Repeat("x", 256), "a\x01b", "a\x7fb", ".", "..", "tab\there"}
		for i, name := range bad {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				b := b.at(t)
				b.post("/api/v1/push", obj{"items": []obj{{"queue": name}}}).fails(http.StatusBadRequest, "queue")
				b.post("/api/v1/push", obj{"items": []obj{{"queue": "ok", "partition": name}}}).fails(http.StatusBadRequest, "partition")
				b.post("/api/v1/configure", obj{"queue": name}).fails(http.StatusBadRequest, "queue")
				// A literal "." segment is not canonical; escaped, it reaches the name rule.
				esc := strings.ReplaceAll(url.PathEscape(name), ".", "%2E")
				b.get("/api/v1/pop/queue/" + esc).fails(http.StatusBadRequest)
				b.get("/api/v1/pop/queue/ok/partition/" + esc).fails(http.StatusBadRequest)
				b.get("/api/v1/pop/queue/ok?consumerGroup="+url.QueryEscape(name)).fails(http.StatusBadRequest, "consumerGroup")
				b.post("/api/v1/consumer-groups/"+esc+"/queues/ok/seek", obj{"toEnd": true}).fails(http.StatusBadRequest)
				b.del("/api/v1/consumer-groups/" + esc).fails(http.StatusBadRequest)
				b.get("/api/v1/dlq?queue=" + url.QueryEscape(name)).fails(http.StatusBadRequest)
				b.get("/api/v1/messages?queue=" + url.QueryEscape(name)).fails(http.StatusBadRequest)
				b.get("/api/v1/status/queues/" + esc).fails(http.StatusBadRequest)
				qe := url.QueryEscape(name)
				for _, p := range []string{
					"/api/v1/consumer-groups?queue=" + qe, "/api/v1/consumer-groups/lagging?queue=" + qe,
					"/api/v1/consumer-groups/lagging?consumerGroup=" + qe, "/api/v1/consumer-groups/" + esc,
					"/api/v1/messages?queue=ok&partition=" + qe, "/api/v1/dlq?consumerGroup=" + qe,
					"/api/v1/dlq?partition=" + qe, "/api/v1/pop?namespace=x&consumerGroup=" + qe,
				} {
					b.get(p).fails(http.StatusBadRequest)
				}
				b.del("/api/v1/resources/queues/" + esc).fails(http.StatusBadRequest)
				b.del("/api/v1/consumer-groups/ok/queues/" + esc).fails(http.StatusBadRequest)
			})
		}
		b.get("/api/v1/status/queues/ok").fails(http.StatusNotFound)
		// 255 bytes of multi-byte UTF-8 are fine; percent-decoded path names reach the queue.
		long := strings.Repeat("é", 127) + "x"
		name := "a b/c?"
		b.push(item(long, "", "a", 1), item(name, "", "b", 1))
		b.pop("/api/v1/pop/queue/" + url.PathEscape(long))
		b.pop("/api/v1/pop/queue/" + url.PathEscape(name))
	})
	t.Run("push_item_cap", func(t *testing.T) {
		b := start(t)
		items := make([]obj, 10001)
		for i := range items {
			items[i] = obj{"queue": "q"}
		}
		if msg := b.post("/api/v1/push", obj{"items": items}).fails(http.StatusBadRequest); msg != "at most 10000 items per push" {
			t.Fatalf("error %q", msg)
		}
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound)
	})
	t.Run("body_cap_413", func(t *testing.T) {
		b := start(t)
		big := `{"items":[{"queue":"q","payload":"` + strings.Repeat("x", 32<<20) + `"}]}`
		b.post("/api/v1/push", big).fails(http.StatusRequestEntityTooLarge)
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound)
	})
	t.Run("utf8", func(t *testing.T) {
		b := start(t)
		if msg := b.post("/api/v1/push", []byte("{\"items\":[{\"queue\":\"q\",\"payload\":\"\xff\"}]}")).fails(http.StatusBadRequest); msg != "Invalid JSON: invalid UTF-8" {
			t.Fatalf("error %q", msg)
		}
		b.get("/api/v1/status/queues/q").fails(http.StatusNotFound)
		b.post("/api/v1/push", `{"items":[{"queue":"q","payload":"a\u0000b"},{"queue":"q","payload":"\ud800"}]}`).arr(http.StatusCreated)
		r := b.get("/api/v1/pop/queue/q?batch=2").wantStatus(http.StatusOK)
		if !utf8.Valid(r.body) {
			t.Fatalf("answer is not valid UTF-8: %q", r.body)
		}
		if !strings.Contains(string(r.body), `"a\u0000b"`) {
			t.Fatalf("the NUL escape was not kept: %s", r.body)
		}
	})
	t.Run("non_canonical_paths", func(t *testing.T) {
		b := start(t)
		for _, p := range []string{"/api/v1//status/queues", "/api/v1/./status/queues", "/api/v1/x/../status/queues", "/api/v1/status/queues/", "/health/"} {
			t.Run(p, func(t *testing.T) {
				r := b.at(t).get(p)
				if r.status >= 300 && r.status < 400 {
					t.Fatalf("redirect %d", r.status)
				}
				if msg := r.fails(http.StatusNotFound); msg != "not found" {
					t.Fatalf("error %q", msg)
				}
			})
		}
	})
}

// TestInvalidUTF8Everywhere: every body route refuses invalid UTF-8, and a name that
// decodes to invalid UTF-8 breaks the name rule.
func TestInvalidUTF8Everywhere(t *testing.T) {
	b := start(t)
	_, ms := b.leased("q", "p", "", 1)
	bad := "\xff"
	for path, body := range map[string]string{
		"/api/v1/ack":                             `{"transactionId":"` + bad + `","partitionId":"x"}`,
		"/api/v1/ack/batch":                       `{"acknowledgments":[{"transactionId":"` + bad + `","partitionId":"x"}]}`,
		"/api/v1/configure":                       `{"queue":"q","options":{"note":"` + bad + `"}}`,
		"/api/v1/transaction":                     `{"operations":[{"type":"push","items":[{"queue":"q","payload":"` + bad + `"}]}]}`,
		"/api/v1/consumer-groups/g/queues/q/seek": `{"timestamp":"` + bad + `"}`,
		"/api/v1/lease/" + ms[0]["leaseId"].(string) + "/extend": `{"seconds":5,"x":"` + bad + `"}`,
	} {
		t.Run(path, func(t *testing.T) {
			if msg := b.at(t).post(path, []byte(body)).fails(http.StatusBadRequest); msg != "Invalid JSON: invalid UTF-8" {
				t.Fatalf("error %q", msg)
			}
		})
	}
	b.get("/api/v1/pop/queue/%FF").fails(http.StatusBadRequest)
	b.get("/api/v1/pop/queue/q?consumerGroup=%FF").fails(http.StatusBadRequest, "consumerGroup")
	b.get("/api/v1/pop/queue/q").empty() // still leased: nothing above changed it
}
