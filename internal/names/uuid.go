package names

import "github.com/google/uuid"

// IsUUID reports whether s is a UUID in its canonical text form: 8-4-4-4-12 hexadecimal digits,
// in either case. Trace ids must be in this form, since a 0.15 broker stores them in a UUID
// column and one malformed id fails the whole statement, other clients' items included.
func IsUUID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}
