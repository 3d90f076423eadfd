package queentest_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/queentest"
)

// A worker under test runs for the rest of the test; stop ends it and says how it ended.
func ExampleRun() {
	t := newExampleT() // in a test: the *testing.T
	defer t.end()
	ctx := context.Background()

	srv := queentest.NewServer(t)
	client, err := queen.New(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	handled := make(chan string, 1)
	stop := queentest.Run(t, func(ctx context.Context) error { // the worker
		return client.Queue("emails").Each().Consume(ctx, func(ctx context.Context, m *queen.Message) error {
			handled <- string(m.Data)
			return nil
		})
	})
	if _, err := client.Queue("emails").Push(ctx, queen.PushItem{Data: map[string]string{"to": "ada@example.com"}}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("handled", <-handled)
	fmt.Println("stopped:", stop()) // nil: the worker stopped when asked
	// Output:
	// handled {"to":"ada@example.com"}
	// stopped: <nil>
}

// exampleT stands in for the *testing.T an example does not have: it runs the cleanups when the
// example ends and reports what would fail the test.
type exampleT struct {
	testing.TB
	ctx      context.Context
	cancel   context.CancelFunc
	cleanups []func()
}

func newExampleT() *exampleT {
	ctx, cancel := context.WithCancel(context.Background())
	return &exampleT{ctx: ctx, cancel: cancel}
}

func (t *exampleT) Helper()                  {}
func (t *exampleT) Context() context.Context { return t.ctx }
func (t *exampleT) Cleanup(f func())         { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(format string, args ...any) {
	log.Printf("test failed: "+format, args...)
}
func (t *exampleT) Fatal(args ...any) { log.Fatal(args...) }

func (t *exampleT) end() {
	t.cancel()
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
