package queen

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// refAckResults is how postAcks read an answer before decodeAckResults: encoding/json into
// refAckResultWire, matched to items by position.
func refAckResults(body []byte, req *request, items int) ([]AckResult, error) {
	var wire []refAckResultWire
	if err := decodeArray(body, req, &wire); err != nil {
		return nil, err
	}
	results := make([]AckResult, items)
	for i := range results {
		r := &results[i]
		if i >= len(wire) {
			r.Error = "the broker sent no result for this item"
			continue
		}
		w := wire[i]
		r.Success, r.Error, r.DLQ, r.LeaseReleased = w.Success, w.Error, w.DLQ, w.LeaseReleased
		if !r.Success && r.Error == "" {
			r.Error = "refused"
		}
	}
	return results, nil
}

type refAckResultWire struct {
	Success       bool   `json:"success"`
	Error         string `json:"error"`
	DLQ           bool   `json:"dlq"`
	LeaseReleased bool   `json:"leaseReleased"`
}

// fastAckResults is postAcks' reading of an answer, without the request.
func fastAckResults(body []byte, req *request, items int) ([]AckResult, error) {
	results := make([]AckResult, items)
	n, err := decodeAckResults(body, req, results)
	if err != nil {
		return nil, err
	}
	for i := range results {
		r := &results[i]
		if i >= n {
			r.Error = "the broker sent no result for this item"
			continue
		}
		if !r.Success && r.Error == "" {
			r.Error = "refused"
		}
	}
	return results, nil
}

func sameAckResults(t *testing.T, body []byte, items int) {
	t.Helper()
	req := &request{method: http.MethodPost, path: "/api/v1/ack/batch"}
	want, wantErr := refAckResults(body, req, items)
	got, gotErr := fastAckResults(body, req, items)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s (%d items):\n err %v, want %v", body, items, gotErr, wantErr)
	}
	if wantErr != nil {
		var we, ge *APIError
		if !errors.As(wantErr, &we) || !errors.As(gotErr, &ge) {
			t.Fatalf("%s: errors %T and %T, want *APIError", body, gotErr, wantErr)
		}
		sameText := !strings.Contains(we.Message, "json: cannot unmarshal")
		if ge.StatusCode != we.StatusCode || ge.Method != we.Method || ge.Path != we.Path ||
			ge.NotJSON != we.NotJSON || (sameText && ge.Message != we.Message) {
			t.Fatalf("%s:\n err %#v\nwant %#v", body, ge, we)
		}
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: result %d = %+v, want %+v", body, i, got[i], want[i])
		}
	}
}

var ackBodies = []string{
	`[{"transactionId":"t","success":true,"error":null,"dlq":false,"leaseReleased":true}]`,
	`[{"transactionId":"t","success":false,"error":"Invalid or expired lease"},{"success":true,"dlq":true}]`,
	`[{"success":false}]`, `[]`, `null`, ` [ null , {} ] `, `[{"SUCCESS":true,"Error":"x","DLQ":true,"leasereleased":true}]`,
	`[{"\u0073uccess":true}]`, `[{"success":true,"success":null}]`, `[{"success":"true"}]`, `[{"error":5}]`,
	`[{"dlq":1}]`, `[5]`, `["x"]`, `[[]]`, `"x"`, `5`, `true`, `{"success":false,"error":"db down"}`, `{}`,
	`{"error":5}`, `[`, `[{"success":true}`, `x`, ``, `[{"error":"é\"\\","success":false}]`, "[{\"error\":\"\xff\"}]",
	`[{"success":1},{"success":true,"error":"a"}]`, `[{"success":true},{"success":true},{"success":true}]`,
}

func TestDecodeAckResultsMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, b := range ackBodies {
		for _, items := range []int{0, 1, 2, 3} {
			sameAckResults(t, []byte(b), items)
		}
	}
}

func TestDecodeAckResultsMatchesEncodingJSONOnGeneratedAnswers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		sameAckResults(t, genAckAnswer(r), r.IntN(4))
	}
}

func FuzzDecodeAckResults(f *testing.F) {
	for _, b := range ackBodies {
		f.Add([]byte(b), 2)
	}
	f.Fuzz(func(t *testing.T, body []byte, items int) {
		sameAckResults(t, body, min(max(items, 0), 8))
	})
}

// genAckAnswer writes a random ack answer, mostly well-formed.
func genAckAnswer(r *rand.Rand) []byte {
	g := &popGen{r: r}
	if r.IntN(20) == 0 {
		g.value("any")
		return g.b.Bytes()
	}
	g.b.WriteByte('[')
	for i := range r.IntN(5) {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.space()
		if r.IntN(15) == 0 {
			g.value("any")
			continue
		}
		g.object(func() {
			for range r.IntN(7) {
				switch r.IntN(6) {
				case 0:
					g.member("error", func() { g.value("string") })
				case 1:
					g.member(g.pick("transactionId", "other"), func() { g.value("any") })
				default:
					g.member(g.pick("success", "dlq", "leaseReleased"), func() { g.value("bool") })
				}
			}
		})
	}
	g.space()
	g.b.WriteByte(']')
	return bytes.Clone(g.b.Bytes())
}
