package queen

// Client talks to one or more Queen brokers. Safe for concurrent use.
type Client struct{}
