// Package names holds the one rule for queue, partition and consumer-group names, shared by the
// SDK (which refuses a bad name before sending it) and the reference broker (which answers 400).
package names

import "unicode/utf8"

// MaxLen is the longest name, in bytes.
const MaxLen = 255

// Rule states what a valid name is, for error messages.
const Rule = "must be 1 to 255 bytes of UTF-8 without control characters, and not \".\" or \"..\""

// Problem says why name is not a valid queue, partition or group name, or "" when it is.
// The reasons are short and start lower case, to follow a field name.
func Problem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxLen:
		return "is longer than 255 bytes"
	case name == "." || name == "..":
		return "must not be \".\" or \"..\""
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return "contains a control character"
		}
	}
	return ""
}
