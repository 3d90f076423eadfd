package queen

import (
	"hash/fnv"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// serverCooldown is how long a broker that failed is skipped before it is tried again.
const serverCooldown = 5 * time.Second

// server is one broker and its health as this client has seen it.
type server struct {
	base      string       // scheme://host[/prefix], no trailing slash
	parsed    *url.URL     // base, parsed: what a request's URL is built on
	host      string       // for log lines
	downUntil atomic.Int64 // unix nanoseconds; 0 or past: healthy
}

func (s *server) url(r *request) string {
	if r.rawQuery == "" {
		return s.base + r.path
	}
	return s.base + r.path + "?" + r.rawQuery
}

// requestURL is r's URL on s. A path with no escapes is joined to the parsed base, which spares
// every request a parse of its whole URL; anything else is parsed, which keeps escapes as sent.
func (s *server) requestURL(r *request) (*url.URL, error) {
	if s.parsed == nil || s.parsed.RawPath != "" || strings.HasSuffix(s.parsed.Host, ":") ||
		strings.IndexByte(r.path, '%') >= 0 {
		return url.Parse(s.url(r))
	}
	u := *s.parsed
	u.Path += r.path
	u.RawQuery = r.rawQuery
	return &u, nil
}

func (s *server) healthy(now int64) bool { return s.downUntil.Load() <= now }

func (s *server) markDown() { s.downUntil.Store(time.Now().Add(serverCooldown).UnixNano()) }

func (s *server) markUp() {
	if s.downUntil.Load() != 0 {
		s.downUntil.Store(0)
	}
}

// pickServer chooses the server for a request. Requests with the same affinity key go to the
// same server while the set of healthy servers does not change (the key is hashed over the
// healthy ones); without a key, the first healthy server in the order given to New. except, when
// set, is avoided if any other server exists. With no healthy server left, every server counts.
func (c *Client) pickServer(key string, except *server) *server {
	if len(c.servers) == 1 {
		return c.servers[0]
	}
	now := time.Now().UnixNano()
	eligible := func(s *server, needHealthy bool) bool {
		return s != except && (!needHealthy || s.healthy(now))
	}
	for _, needHealthy := range [2]bool{true, false} {
		n := 0
		for _, s := range c.servers {
			if eligible(s, needHealthy) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		k := 0
		if key != "" {
			h := fnv.New32a()
			_, _ = h.Write([]byte(key))
			k = int(h.Sum32() % uint32(n))
		}
		for _, s := range c.servers {
			if eligible(s, needHealthy) {
				if k == 0 {
					return s
				}
				k--
			}
		}
	}
	return c.servers[0]
}

// affinityKey names the (queue, partition, group) a request belongs to.
func affinityKey(queue, partition, group string) string {
	if group == queueModeGroup {
		group = ""
	}
	return queue + "\x00" + partition + "\x00" + group
}
