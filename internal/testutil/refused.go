package testutil

// RefusedURL is a broker URL where nothing listens, so that connecting is refused at once.
// Port 1 is outside the range the system hands out to listeners on port 0: a port freed by
// closing a test's own listener may be taken at once by another test's server while
// `go test ./...` runs packages side by side, and the "refused" connection then reaches it.
const RefusedURL = "http://127.0.0.1:1"
