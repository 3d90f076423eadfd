package queentest_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/queenmq/queen-go/queentest"
)

// A test starts a broker, pushes, pops, and lets a lease expire without sleeping.
// In a test, queentest.NewServer(t) does the Start and the Close.
func Example() {
	srv, err := queentest.Start(queentest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()

	resp, err := http.Post(srv.URL()+"/api/v1/push", "application/json",
		strings.NewReader(`{"items":[{"queue":"orders","payload":{"id":1}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()

	pop := func() {
		resp, err := http.Get(srv.URL() + "/api/v1/pop/queue/orders?leaseSeconds=30")
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		var res struct {
			Messages []struct {
				Data            json.RawMessage `json:"data"`
				DeliveryAttempt int             `json:"deliveryAttempt"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.StatusCode, string(res.Messages[0].Data), res.Messages[0].DeliveryAttempt)
	}
	pop()
	srv.Advance(30 * time.Second) // nobody acked: the lease expires and the message comes back
	pop()
	// Output:
	// 200 {"id":1} 1
	// 200 {"id":1} 2
}
