package testutil

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/route"
)

func TestSpyRecordsRequestsAndLeavesTheirBodiesForTheServer(t *testing.T) {
	var served string
	spy, url := NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		served = string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	resp, err := http.Post(url+"/api/v1/ack/batch", "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, `{"a":1}`, served)
	got := spy.Only(t)
	assert.Equal(t, route.AckBatch, got.Route)
	assert.Equal(t, `{"a":1}`, string(got.Body))
	assert.Len(t, spy.Of(route.FamilyAck), 1)
	assert.Equal(t, 1, spy.Count(route.AckBatch))
}

func TestSpyOverrideAnswersInsteadOfTheServer(t *testing.T) {
	spy, url := NewSpy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the server was reached")
	}))
	spy.Override(func(r *http.Request) (int, bool) { return http.StatusServiceUnavailable, true })
	resp, err := http.Get(url + "/api/v1/pop/queue/q")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	spy.Override(func(r *http.Request) (int, bool) { return 0, true })
	_, err = http.Get(url + "/api/v1/pop/queue/q")
	assert.Error(t, err, "a dropped connection")
}

func TestSpyAnswerRecordsAndLetsTheTestAnswer(t *testing.T) {
	var spy Spy
	mt := httpmock.NewMockTransport()
	n := 0
	mt.RegisterNoResponder(spy.Answer(func(*http.Request) (*http.Response, error) {
		n++
		return httpmock.NewStringResponse(200+n, ""), nil
	}))
	hc := &http.Client{Transport: mt}
	for want := range []int{201, 202} {
		resp, err := hc.Get("http://broker.test/api/v1/pop/queue/q")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 201+want, resp.StatusCode)
	}
	assert.Equal(t, 2, spy.Count(route.PopQueue))
}

func TestRecvFailsNothingWhenAValueArrives(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	assert.Equal(t, 7, Recv(t, ch, "a value"))
	assert.NoError(t, Recv(t, Go(func() error { return nil }), "fn"))
}

func TestCapturesAreReadByKindAndNamedWithoutTheirIds(t *testing.T) {
	pops := Captures(t, "../../testdata/wire015_captures.json", "pop")
	assert.NotEmpty(t, pops)
	for _, c := range pops {
		assert.Equal(t, "pop", c.Kind)
		id, _, _ := strings.Cut(c.Title, " ")
		assert.Equal(t, id+" "+c.Name(), c.Title, "the name is what follows the id")
	}
	c := CaptureNamed(t, "../../testdata/wire015_captures.json", "pop", pops[0].Name())
	assert.Equal(t, pops[0], c)
}
