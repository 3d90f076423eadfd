package queen

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queenmq/queen-go/internal/testutil"
	"github.com/queenmq/queen-go/queentest"
)

// A message its handler dead-letters is filed even when the handler of the next message in the
// batch acks that one itself: the loop's dlq reaches the broker first. Were it held back to the
// end of the batch, the handler's own completed would move the cursor past it (R67), the late
// dlq would change nothing (R68), and the message would be neither done nor filed: lost.
// Found by the chaos suite (each/manual-ack).
func TestConsumeDeadLetterIsSentBeforeTheNextMessageIsHandled(t *testing.T) {
	t.Parallel()
	for _, autoAck := range []bool{false, true} {
		t.Run(fmt.Sprintf("autoAck=%v", autoAck), func(t *testing.T) {
			t.Parallel()
			_, c := brokerAndClient(t, queentest.WithManualClock())
			pushN(t, c, "filed", "p", 4)

			var order []string
			err := c.Queue("filed").Batch(4).AutoAck(autoAck).Limit(4).Each().
				Consume(testutil.Context(t), func(ctx context.Context, m *Message) error {
					i := decode(t, m).I
					order = append(order, fmt.Sprintf("%d@%d", i, m.DeliveryAttempt))
					if i == 1 {
						return DeadLetter(errors.New("poison"))
					}
					return m.Ack(ctx) // the handler settles the others itself
				})
			require.NoError(t, err)

			assert.Equal(t, []string{"0@1", "1@1", "2@1", "3@1"}, order, "one batch, one delivery each")
			dl := deadLetters(t, c, "filed")
			require.Len(t, dl, 1, "the dead-lettered message was filed")
			assert.Equal(t, "p-1", dl[0].TransactionID)
			assert.Equal(t, "poison", dl[0].ErrorMessage)
			assert.Empty(t, drain(t, c, "filed"))
		})
	}
}
