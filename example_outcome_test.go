package queen_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queenmq/queen-go"
)

// chargeCard is a consume handler under test: a declined card is given up on, a busy gateway
// is asked again later, and anything else is a failure.
func chargeCard(_ context.Context, m *queen.Message) error {
	switch string(m.Data) {
	case `"declined"`:
		return queen.DeadLetter(errors.New("card declined"))
	case `"busy"`:
		return queen.RetryAfter(30*time.Second, errors.New("gateway busy"))
	case `"ok"`:
		return nil
	}
	return errors.New("unexpected answer")
}

// OutcomeOf tells what Consume would ack for a handler's return, so a handler can be tested
// without a broker.
func ExampleOutcomeOf() {
	for _, data := range []string{`"ok"`, `"busy"`, `"declined"`, `"garbled"`} {
		err := chargeCard(context.Background(), &queen.Message{Data: []byte(data)})
		fmt.Println(data, queen.OutcomeOf(err))
	}
	// Output:
	// "ok" completed
	// "busy" retry
	// "declined" dlq
	// "garbled" failed
}
