package queen

import (
	"fmt"
	"unicode/utf8"

	"github.com/queenmq/queen-go/internal/names"
)

// validateNames refuses a queue, partition or group name the broker would refuse (and that
// could otherwise alias another path, as ".." does), before anything is sent.
func (b QueueBuilder) validateNames() error {
	if b.queue != "" {
		if err := checkName("Queue", b.queue); err != nil {
			return err
		}
	}
	if b.partition != "" {
		if err := checkName("Partition", b.partition); err != nil {
			return err
		}
	}
	if b.group != "" {
		if err := checkName("Group", b.group); err != nil {
			return err
		}
	}
	return nil
}

// checkName refuses an invalid queue, partition or group name given to a builder method.
func checkName(method, name string) error {
	if why := names.Problem(name); why != "" {
		return fmt.Errorf("%w: %s(%s): the name %s (%s)", ErrInvalidOption, method, clipQuoted(name), why, names.Rule)
	}
	return nil
}

// checkNameField refuses an invalid queue, partition or group name in a request field.
func checkNameField(field, name string) error {
	if why := names.Problem(name); why != "" {
		return fmt.Errorf("%w: %s=%s: the name %s (%s)", ErrInvalidOption, field, clipQuoted(name), why, names.Rule)
	}
	return nil
}

// checkText refuses a string that would reach the broker as invalid UTF-8: a 0.15 broker
// dies on one, and a 2.0 broker refuses the whole request.
func checkText(setting, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s=%s: is not valid UTF-8", ErrInvalidOption, setting, clipQuoted(s))
	}
	return nil
}

// clipQuoted quotes a value for an error message, keeping a huge one short.
func clipQuoted(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// checkPushTarget refuses a push's queue or partition name; name prefixes the field names.
func checkPushTarget(name, queue, partition string) error {
	if err := checkNameField(name+".queue", queue); err != nil {
		return err
	}
	if partition != "" {
		return checkNameField(name+".partition", partition)
	}
	return nil
}
