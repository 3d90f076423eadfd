package queen

import (
	"context"
	"errors"
	"net/url"
)

// Client talks to one or more Queen brokers. Safe for concurrent use.
type Client struct {
	renewer leaseRenewer
}

// Do sends one request to the broker with the client's auth, retries and failover, for the
// endpoints the SDK does not wrap.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return errors.New("not implemented")
}
