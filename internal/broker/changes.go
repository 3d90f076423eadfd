package broker

// changeFeed lets readers wait for the engine's next change of state without polling: the
// channel is made when someone waits and closed by the next mutating step.
type changeFeed struct{ ch chan struct{} }

// next is closed at the next change; the caller holds the engine's lock.
func (f *changeFeed) next() <-chan struct{} {
	if f.ch == nil {
		f.ch = make(chan struct{})
	}
	return f.ch
}

// changed wakes every reader waiting on next; the caller holds the engine's lock.
func (f *changeFeed) changed() {
	if f.ch != nil {
		close(f.ch)
		f.ch = nil
	}
}
