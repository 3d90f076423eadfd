package admin

import (
	"fmt"

	queen "github.com/queenmq/queen-go"
	"github.com/queenmq/queen-go/internal/names"
)

// validName refuses a queue, partition or group name the broker would refuse, before it
// becomes a path segment (where "." or ".." would name another route) or a query value.
func validName(field, value string) error {
	if why := names.Problem(value); why != "" {
		shown := fmt.Sprintf("%q", value)
		if len(value) > 64 {
			shown = fmt.Sprintf("%q… (%d bytes)", value[:64], len(value))
		}
		return fmt.Errorf("%w: %s=%s: the name %s (%s)", queen.ErrInvalidOption, field, shown, why, names.Rule)
	}
	return nil
}

// optionalName is validName for a filter that may be left empty.
func optionalName(field, value string) error {
	if value == "" {
		return nil
	}
	return validName(field, value)
}
