package queen

import "github.com/queenmq/queen-go/internal/route"

// popRoute is the route of the builder's pop: discovery, one partition, or the whole queue.
func (b QueueBuilder) popRoute() route.Route {
	switch {
	case b.discovery():
		return route.PopDiscovery
	case b.partition != "":
		return route.PopPartition
	default:
		return route.PopQueue
	}
}
