package wire

import "testing"

func TestRefusalTextsMapToTheirMeaning(t *testing.T) {
	cases := []struct {
		got, want Meaning
		what      string
	}{
		{AckRefusalMeaning("Invalid or expired lease"), MeansLeaseGone, "an ack whose lease is gone"},
		{AckRefusalMeaning("Message not found"), MeansOther, "an ack of an unknown message"},
		{ReadRefusalMeaning("Queue not found"), MeansNotFound, "0.15's unknown queue"},
		{ReadRefusalMeaning("consumer group not found"), MeansNotFound, "an unknown group"},
		{ReadRefusalMeaning("database is down"), MeansOther, "another refusal"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.what, c.got, c.want)
		}
	}
}
