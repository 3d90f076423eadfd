package queen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// refDecodePop is the encoding/json decoder decodePop replaced; decodePop must answer every
// body exactly as it does.
func refDecodePop(body []byte, path, route string) ([]*Message, error) {
	var resp refPopResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path,
			Message: "pop answer is not a JSON object: " + err.Error(), NotJSON: true}
	}
	if resp.Success != nil && !*resp.Success && resp.Error != nil && !emptyPopErrors[*resp.Error] {
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: *resp.Error}
	}
	if resp.Messages == nil {
		msg := "pop answer has no messages"
		if resp.Error != nil {
			msg = *resp.Error
		}
		return nil, &APIError{StatusCode: http.StatusOK, Method: http.MethodGet, Path: path, Message: msg}
	}
	wire := *resp.Messages
	msgs := make([]*Message, len(wire))
	for i := range wire {
		w := &wire[i]
		m := &Message{}
		m.ID, m.TransactionID, m.TraceID = w.ID, w.TransactionID, w.TraceID
		m.Queue = firstNonEmpty(w.Queue, resp.Queue)
		m.Partition = firstNonEmpty(w.Partition, resp.Partition)
		m.PartitionID = firstNonEmpty(w.PartitionID, resp.PartitionID)
		m.ConsumerGroup = firstNonEmpty(w.ConsumerGroup, resp.ConsumerGroup)
		m.LeaseID = firstNonEmpty(w.LeaseID, resp.LeaseID)
		m.Offset, m.DeliveryAttempt = -1, 0
		if w.Offset.set {
			m.Offset = w.Offset.v
		}
		if w.DeliveryAttempt.set {
			m.DeliveryAttempt = int(w.DeliveryAttempt.v)
		}
		m.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
		m.Data = w.Data
		m.route = route
		msgs[i] = m
	}
	return msgs, nil
}

type refPopResponse struct {
	Success       *bool             `json:"success"`
	Error         *string           `json:"error"`
	Queue         string            `json:"queue"`
	Partition     string            `json:"partition"`
	PartitionID   string            `json:"partitionId"`
	LeaseID       string            `json:"leaseId"`
	ConsumerGroup string            `json:"consumerGroup"`
	Messages      *[]refWireMessage `json:"messages"`
}

type refWireMessage struct {
	ID              string          `json:"id"`
	TransactionID   string          `json:"transactionId"`
	TraceID         string          `json:"traceId"`
	Data            json.RawMessage `json:"data"`
	CreatedAt       string          `json:"createdAt"`
	Queue           string          `json:"queue"`
	Partition       string          `json:"partition"`
	PartitionID     string          `json:"partitionId"`
	LeaseID         string          `json:"leaseId"`
	ConsumerGroup   string          `json:"consumerGroup"`
	Offset          refOptionalInt  `json:"offset"`
	DeliveryAttempt refOptionalInt  `json:"deliveryAttempt"`
}

type refOptionalInt struct {
	v   int64
	set bool
}

func (o *refOptionalInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return fmt.Errorf("not an integer: %q", b)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return fmt.Errorf("not an integer: %q", b)
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	o.v, o.set = v, true
	return nil
}

// samePop fails unless decodePop and the reference agree on body. The text of a type error
// may differ (encoding/json names its Go types); everything else must match exactly.
func samePop(t *testing.T, body []byte) {
	t.Helper()
	const path, route = "/api/v1/pop/queue/q", "q\x00p\x00g"
	want, wantErr := refDecodePop(body, path, route)
	got, gotErr := decodePop(body, path, route)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s:\n err %v, want %v", body, gotErr, wantErr)
	}
	if wantErr != nil {
		var we, ge *APIError
		if !errors.As(wantErr, &we) || !errors.As(gotErr, &ge) {
			t.Fatalf("%s: errors %T and %T, want *APIError", body, gotErr, wantErr)
		}
		sameText := !we.NotJSON || !json.Valid(body) || !strings.Contains(we.Message, "json: cannot unmarshal")
		if ge.StatusCode != we.StatusCode || ge.Method != we.Method || ge.Path != we.Path ||
			ge.NotJSON != we.NotJSON || (sameText && ge.Message != we.Message) {
			t.Fatalf("%s:\n err %#v\nwant %#v", body, ge, we)
		}
		return
	}
	if got == nil || len(got) != len(want) {
		t.Fatalf("%s: %d messages (nil %v), want %d", body, len(got), got == nil, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.TransactionID != w.TransactionID || g.TraceID != w.TraceID ||
			g.Queue != w.Queue || g.Partition != w.Partition || g.PartitionID != w.PartitionID ||
			g.ConsumerGroup != w.ConsumerGroup || g.LeaseID != w.LeaseID ||
			g.Offset != w.Offset || g.DeliveryAttempt != w.DeliveryAttempt ||
			g.CreatedAt != w.CreatedAt || !bytes.Equal(g.Data, w.Data) || (g.Data == nil) != (w.Data == nil) ||
			g.route != w.route {
			t.Fatalf("%s: message %d\n got %+v\nwant %+v", body, i, g, w)
		}
	}
}

// popBodies are hand-picked answers: every shape of wire-0.15.md and SPEC §2.3, and the
// corners of encoding/json's reading.
var popBodies = []string{
	`{"success":true,"queue":"orders","partition":"4","partitionId":"pid-4","leaseId":"lid-1","consumerGroup":"billing","partitionsClaimed":1,"messages":[{"id":"mid-1","transactionId":"order-9137","traceId":null,"data":{"n":1},"producerSub":null,"createdAt":"2026-11-29T21:33:13.427069Z","partitionId":"pid-4","partition":"4","leaseId":"lid-1","consumerGroup":"billing","offset":6,"deliveryAttempt":1}]}`,
	`{"consumerGroup":"g1","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","messages":[{"consumerGroup":"g1","createdAt":"2026-11-29T21:46:13.767056Z","data":{"n":1},"id":"01a22945-db81-7000-89ce-1fc92ee081bb","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","producerSub":null,"traceId":null,"transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6501c"}],"partition":"p1","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partitionsClaimed":1,"queue":"smoke-basic","success":true}`,
	`{"consumerGroup":"__QUEUE_MODE__","leaseId":"l","messages":[{"createdAt":"2026-11-29T21:46:35.343739Z","data":null,"id":"a"},{"data":"just a string","id":"b"}],"partition":"Default","partitionId":"p","queue":"q","success":true}`,
	`{"messages":[]}`,
	`{"error":"lease_held","messages":[],"success":false}`,
	`{"error":"no_available_partition","messages":[],"success":false}`,
	`{"error":"partition_not_found","messages":[],"success":false}`,
	`{"consumerGroup":"g1","leaseId":null,"messages":[],"partition":"p1","partitionId":null,"queue":"smoke-basic","success":true}`,
	`{"messages":[],"paused":true}`,
	`{"error":"ERROR:  invalid input syntax for type uuid: \"p1\"\nCONTEXT:  x","success":false}`,
	`{"error":"lease_held","success":false}`,
	`{"error":"boom","messages":[],"success":false}`,
	`{"error":"boom","messages":[{"id":"m"}],"success":true}`,
	`{"success":true}`, `{}`, `null`, ` null `, `[]`, `"x"`, `5`, `true`, `{"messages":null}`,
	`{"messages":{}}`, `{"messages":[5]}`, `{"messages":[null,{"id":"m"}]}`, `{"messages":["x"]}`,
	`{"success":"yes","messages":[]}`, `{"error":5,"messages":[]}`, `{"queue":5,"messages":[]}`,
	`{"messages":[{"offset":"7"}]}`, `{"messages":[{"offset":1.5}]}`, `{"messages":[{"offset":1e3}]}`,
	`{"messages":[{"offset":-0,"deliveryAttempt":12}]}`, `{"messages":[{"offset":123456789012345678}]}`,
	`{"messages":[{"offset":1234567890123456789}]}`, `{"messages":[{"offset":-123456789012345678}]}`,
	`{"messages":[{"offset":true}]}`, `{"messages":[{"offset":{}}]}`, `{"messages":[{"offset":null,"deliveryAttempt":null}]}`,
	`{"messages":[{"offset":5,"offset":null}]}`, `{"messages":[{"id":5}]}`, `{"messages":[{"id":[]}]}`,
	`{"messages":[{"createdAt":5}]}`, `{"messages":[{"createdAt":null}]}`,
	`{"messages":[{"createdAt":"2026-11-29 21:46:13+00","data":1}]}`,
	`{"messages":[{"createdAt":"2026-11-29T21:46:13Z"}]}`, `{"messages":[{"createdAt":"2026-11-29T21:46:13.1+02:00"}]}`,
	`{"messages":[{"createdAt":"2024-02-29T23:59:59.999999Z"}]}`, `{"messages":[{"createdAt":"2023-02-29T00:00:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-13-01T00:00:00.000000Z"}]}`, `{"messages":[{"createdAt":"2026-04-31T00:00:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-01-01T24:00:00.000000Z"}]}`, `{"messages":[{"createdAt":"2026-01-01T00:60:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-01-01T00:00:60.000000Z"}]}`, `{"messages":[{"createdAt":"0000-01-01T00:00:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-00-10T00:00:00.000000Z"}]}`, `{"messages":[{"createdAt":"2026-01-00T00:00:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-01-01t00:00:00.000000z"}]}`, `{"messages":[{"createdAt":"\u0032026-01-01T00:00:00.000000Z"}]}`,
	`{"messages":[{"createdAt":"2026-01-01T00:00:00.000000Z","createdAt":null}]}`,
	`{"QUEUE":"q","Messages":[{"ID":"m","TransactionId":"t","Data":[1]}]}`,
	`{"\u0071ueue":"q","messages":[{"\u0069d":"m","partitionId":"\u0070"}],"partitionId":"p"}`,
	"{\"queue\":\"q\",\"messages\":[{\"\u017fuccess\":1,\"id\":\"\xff\"}],\"\u212aey\":1}",
	`{"queue":"top","queue":null,"messages":[{"queue":""},{"queue":"own"},{"queue":null}]}`,
	`{"messages":[{"id":"a","data":{"x":1}}],"messages":[{"transactionId":"t"},{"id":"b"}]}`,
	`{"messages":[{"id":"a"},{"id":"b"}],"messages":[{"traceId":"t"}],"messages":[{},{}]}`,
	`{"messages":[{"id":"a"}],"messages":null,"messages":[{}]}`,
	`{"messages":[{"id":"a"}],"messages":null}`,
	`{"success":false,"success":null,"error":"boom","messages":[]}`,
	`{"error":"boom","error":null,"success":false,"messages":[]}`,
	`{"partitionId":"p\"x","leaseId":"l\\","messages":[{"partitionId":"p\"x"},{"leaseId":"other"}]}`,
	` { "messages" : [ { "id" : "m" , "data" : { "a" : [ 1 , 2 ] } } ] } `,
	`{"messages":[{"id":"m","data":"\u00e9\ud83d\ude00"}]}`,
	`{"messages":[`, `{"messages":[}`, `{"a":1}x`, ``, `{"messages":[{"id":"\ud800"}]}`,
}

func TestDecodePopMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, b := range popBodies {
		samePop(t, []byte(b))
	}
}

func TestDecodePopMatchesEncodingJSONOnGeneratedAnswers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		samePop(t, genPopAnswer(r))
	}
}

func FuzzDecodePop(f *testing.F) {
	for _, b := range popBodies {
		f.Add([]byte(b))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(genPopAnswer(r))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		samePop(t, body)
	})
}

// genPopAnswer writes a random pop answer: mostly well-formed, with keys in other cases or
// escaped, repeated keys, nulls, values of the wrong type and odd timestamps.
func genPopAnswer(r *rand.Rand) []byte {
	g := &popGen{r: r}
	if r.IntN(40) == 0 {
		return []byte(g.pick("null", "[]", `"x"`, "7", " {} "))
	}
	g.object(func() {
		for range r.IntN(10) {
			switch r.IntN(9) {
			case 0, 1:
				g.member("messages", func() { g.messages() })
			case 2:
				g.member("success", func() { g.value("bool") })
			case 3:
				g.member("error", func() {
					g.str(g.pick("lease_held", "no_available_partition", "partition_not_found", "boom", ""))
				})
			case 4:
				g.member(g.pick("partitionsClaimed", "paused", "producerSub"), func() { g.value("any") })
			default:
				g.member(g.pick("queue", "partition", "partitionId", "leaseId", "consumerGroup"), func() { g.value("string") })
			}
		}
	})
	return g.b.Bytes()
}

type popGen struct {
	r     *rand.Rand
	b     bytes.Buffer
	comma []bool
}

func (g *popGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *popGen) space() {
	if g.r.IntN(8) == 0 {
		g.b.WriteString(g.pick(" ", "\n", "\t ", "\r\n"))
	}
}

func (g *popGen) object(members func()) {
	g.b.WriteByte('{')
	g.comma = append(g.comma, false)
	members()
	g.comma = g.comma[:len(g.comma)-1]
	g.space()
	g.b.WriteByte('}')
}

func (g *popGen) member(name string, value func()) {
	if g.comma[len(g.comma)-1] {
		g.b.WriteByte(',')
	}
	g.comma[len(g.comma)-1] = true
	g.space()
	switch g.r.IntN(20) {
	case 0:
		name = strings.ToUpper(name)
	case 1:
		name = `\u00` + fmt.Sprintf("%x", name[0]) + name[1:]
	case 2:
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	g.b.WriteString(`"` + name + `"`)
	g.space()
	g.b.WriteByte(':')
	g.space()
	value()
}

func (g *popGen) str(s string) {
	b, _ := json.Marshal(s)
	g.b.Write(b)
}

// value writes a value of kind ("string", "bool", "int", "any"), or now and then another.
func (g *popGen) value(kind string) {
	n := g.r.IntN(30)
	switch {
	case n == 0:
		kind = g.pick("string", "bool", "int", "object", "array")
	case n < 4:
		g.b.WriteString("null")
		return
	case kind == "any":
		kind = g.pick("string", "bool", "int", "object", "array")
	}
	switch kind {
	case "string":
		g.str(g.pick("q", "p1", "", "039cf519-3102-46c2-86d2-8a85fee50b58", "__QUEUE_MODE__", "é\"\\", "x\u2028y"))
	case "bool":
		g.b.WriteString(g.pick("true", "false"))
	case "int":
		g.b.WriteString(g.pick("0", "-0", "7", "-3", "123456789012345678", "1234567890123456789", "1.5", "2e3", `"9"`))
	case "object":
		g.b.WriteString(g.pick(`{}`, `{"n":1}`, `{"a":{"b":[1,"}"]}}`))
	default:
		g.b.WriteString(g.pick(`[]`, `[1,2]`, `[{"x":null}]`))
	}
}

func (g *popGen) messages() {
	if g.r.IntN(15) == 0 {
		g.value("any")
		return
	}
	g.b.WriteByte('[')
	for i := range g.r.IntN(4) {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.space()
		if g.r.IntN(15) == 0 {
			g.value("any")
			continue
		}
		g.object(g.message)
	}
	g.b.WriteByte(']')
}

func (g *popGen) message() {
	for range g.r.IntN(14) {
		switch g.r.IntN(12) {
		case 0, 1:
			g.member("createdAt", func() {
				if g.r.IntN(6) == 0 {
					g.value("any")
					return
				}
				g.str(g.timestamp())
			})
		case 2:
			g.member("data", func() { g.value("any") })
		case 3:
			g.member(g.pick("offset", "deliveryAttempt"), func() { g.value("int") })
		case 4:
			g.member(g.pick("producerSub", "extra"), func() { g.value("any") })
		default:
			g.member(g.pick("id", "transactionId", "traceId", "queue", "partition", "partitionId", "leaseId", "consumerGroup"),
				func() { g.value("string") })
		}
	}
}

// timestamp is mostly the broker's layout, with fields now and then out of range, and other
// RFC 3339 forms.
func (g *popGen) timestamp() string {
	d := func(max int) int { return g.r.IntN(max) }
	switch g.r.IntN(6) {
	case 0:
		return time.Unix(int64(d(1<<31)), int64(d(1e9))).UTC().Format(time.RFC3339Nano)
	case 1:
		return time.Unix(int64(d(1<<31)), 0).In(time.FixedZone("", 3600*(d(25)-12))).Format(time.RFC3339)
	case 2:
		return g.pick("", "garbage", "2026-11-29 21:46:13+00", "2026-11-29T21:46:13.767056+00:00")
	}
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", d(10000), d(14), d(33), d(26), d(62), d(62), d(1000000))
}

// popAnswer100 is a 100-message 2.0 pop answer.
var popAnswer100 = func() []byte {
	var b strings.Builder
	b.WriteString(`{"success":true,"queue":"bench","partition":"p01","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","consumerGroup":"__QUEUE_MODE__","partitionsClaimed":1,"messages":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"01a22945-db81-7000-89ce-1fc92ee0%04d","transactionId":"5e09b8de-aa5f-4e24-a12f-e2bdb0d6%04d","traceId":null,"data":{"order":%d,"sku":"A-%04d","qty":3},"producerSub":null,"createdAt":"2026-11-29T21:46:13.767056Z","partitionId":"039cf519-3102-46c2-86d2-8a85fee50b58","partition":"p01","leaseId":"01a22945-dbbd-7000-ae31-34cbc1c0d5de","consumerGroup":"__QUEUE_MODE__","offset":%d,"deliveryAttempt":1}`, i, i, i, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}()

// A message costs its id and transactionId strings; everything else is shared per answer.
func TestDecodePopAllocations(t *testing.T) {
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := decodePop(popAnswer100, "/p", "r"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2*100+20 {
		t.Fatalf("decoding 100 messages allocated %v times, want at most %d", allocs, 2*100+20)
	}
}

func BenchmarkDecodePop(b *testing.B) {
	b.SetBytes(int64(len(popAnswer100)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodePop(popAnswer100, "/p", "r"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePopEncodingJSON(b *testing.B) {
	b.SetBytes(int64(len(popAnswer100)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := refDecodePop(popAnswer100, "/p", "r"); err != nil {
			b.Fatal(err)
		}
	}
}
