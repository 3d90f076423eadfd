package queen

// leaseRenewer extends the leases of in-flight batches for one client. The zero value is ready.
type leaseRenewer struct{}

// stop ends the renewer's goroutine, if any; Close calls it.
func (r *leaseRenewer) stop() {}
