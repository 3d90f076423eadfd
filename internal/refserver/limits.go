package refserver

import (
	"unicode/utf8"
)

// maxPushItems is the most items one push (or one transaction push operation) may carry, so
// no single request holds the engine for long.
const maxPushItems = 10000

// checkPushItemCount refuses a push with more than maxPushItems items, before any is decoded.
func checkPushItemCount(n int) error {
	if n > maxPushItems {
		return badRequest("at most %d items per push", maxPushItems)
	}
	return nil
}

// checkUTF8 refuses a body that is not valid UTF-8: stored strings are echoed in
// answers, and a strict JSON client could then read none of them. Escapes such as \ud800 are
// JSON text, valid UTF-8, and kept.
func checkUTF8(body []byte) error {
	if !utf8.Valid(body) {
		return badRequest("Invalid JSON: invalid UTF-8")
	}
	return nil
}
