package queen

import (
	"context"
	"net/http"

	"github.com/queenmq/queen-go/internal/route"
	"github.com/queenmq/queen-go/internal/wire"
)

// ServerInfo is what a broker says about itself on its health route.
type ServerInfo struct {
	Status  string // "healthy" when the broker can serve
	Version string // "" when the broker does not say
}

// Ping asks the broker whether it is up (GET /health), with the client's retries and
// failover. It needs no token. A broker that cannot be reached, or answers an error, returns
// the error.
func (c *Client) Ping(ctx context.Context) (ServerInfo, error) {
	req := request{method: http.MethodGet, path: route.Health.Path(), route: route.Health}
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := c.send(ctx, &req, buf); err != nil {
		return ServerInfo{}, err
	}
	var h wire.Health
	if err := wire.Unmarshal(buf.Bytes(), &h); err != nil {
		return ServerInfo{}, &APIError{StatusCode: http.StatusOK, Method: req.method, Path: req.path,
			Message: "health answer is not a JSON object: " + err.Error()}
	}
	return ServerInfo{Status: h.Status, Version: h.Version}, nil
}
