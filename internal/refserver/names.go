package refserver

import "github.com/queenmq/queen-go/internal/names"

// checkName refuses a queue, partition or consumer-group name that breaks the name rule, naming the
// field and the rule. Every route that takes a name calls it (or checkOptionalName) before
// the engine sees the request, so a refused name leaves no state behind.
func checkName(field, name string) error {
	if why := names.Problem(name); why != "" {
		return badRequest("%s %s: a name %s", field, why, names.Rule)
	}
	return nil
}

// checkOptionalName is checkName for a name that may be absent ("" means not given).
func checkOptionalName(field, name string) error {
	if name == "" {
		return nil
	}
	return checkName(field, name)
}

// checkSeekNames checks the two names of a seek's path.
func checkSeekNames(group, queue string) error {
	if err := checkName("group", group); err != nil {
		return err
	}
	return checkName("queue", queue)
}
