package wire

import "strings"

// Meaning is what a broker's refusal text means to a client: the one place where an answer's
// error text is read for its meaning, so that the SDK and admin agree on it.
type Meaning int

const (
	// MeansOther is any refusal that no sentinel stands for.
	MeansOther Meaning = iota
	// MeansLeaseGone is an ack refused because its lease expired, was released or never
	// existed: the broker has taken the message back.
	MeansLeaseGone
	// MeansNotFound is a read or a change of something the broker does not know (0.15 says so
	// in a 200 answer's error text, 2.0 in a 404's).
	MeansNotFound
)

// ackLeaseGone is the text both broker generations refuse an ack with when its lease is gone.
const ackLeaseGone = "Invalid or expired lease"

// AckRefusalMeaning is what the error text of a refused ack item means.
func AckRefusalMeaning(text string) Meaning {
	if text == ackLeaseGone {
		return MeansLeaseGone
	}
	return MeansOther
}

// ReadRefusalMeaning is what the error text of a refused read means: 0.15 answers an unknown queue or
// group with a 200 whose error says "... not found".
func ReadRefusalMeaning(text string) Meaning {
	if strings.Contains(strings.ToLower(text), "not found") {
		return MeansNotFound
	}
	return MeansOther
}
