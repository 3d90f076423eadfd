package wire

// ErrorAnswer is the body of every 4xx and 5xx answer.
type ErrorAnswer struct {
	Error string `json:"error"`
}

// Refusal is the object a 0.15 broker answers with 200 where a result was expected, when its
// database refused the request: {"success":false,"error":"..."}. An empty pop's 0.15 variants
// share the shape.
type Refusal struct {
	Success *bool   `json:"success,omitzero"`
	Error   *string `json:"error,omitzero"`
}

// Refused reports a body shaped {"success":false,...}.
func (r Refusal) Refused() bool { return r.Success != nil && !*r.Success }
