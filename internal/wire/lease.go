package wire

// ExtendRequest is the body of a lease's extension. A broker extends by 60
// seconds when Seconds is absent.
type ExtendRequest struct {
	Seconds *int64 `json:"seconds,omitzero"`
}

// ExtendResult is the one element of an extend answer. On a refusal Success is false, Error
// says why and ExpiresAt is null.
type ExtendResult struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *Time   `json:"expiresAt"`
}
