package names

// IsUUID reports whether s is a UUID in its canonical text form: 8-4-4-4-12 hexadecimal digits,
// in either case. Trace ids must be in this form, since a 0.15 broker stores them in a UUID
// column and one malformed id fails the whole statement, other clients' items included.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
