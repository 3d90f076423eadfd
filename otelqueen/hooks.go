package otelqueen

import (
	"context"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"

	queen "github.com/queenmq/queen-go"
)

// Instruments of queen's own.
const (
	retriesName   = "messaging.queen.client.retries"
	leaseLostName = "messaging.queen.lease.lost"
)

// operationTypes are the messaging operations Hooks records, by queen.RequestEvent.Operation,
// each with its messaging.operation.type (invalid where the conventions have none). Requests
// of any other operation (administration, health) are not recorded.
var operationTypes = map[string]attribute.KeyValue{
	"pop":         semconv.MessagingOperationTypeReceive,
	"ack":         semconv.MessagingOperationTypeSettle,
	"push":        semconv.MessagingOperationTypeSend,
	"renew":       {},
	"transaction": {},
}

// Hooks returns queen.Hooks that record the client's operations: durations per HTTP
// attempt, messages sent, transport retries and lost leases (see the package documentation).
func Hooks(opts ...Option) queen.Hooks {
	meter := newConfig(opts).meter()
	duration, err := messagingconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	handleErr(err)
	sent, err := messagingconv.NewClientSentMessages(meter)
	handleErr(err)
	retries, err := meter.Int64Counter(retriesName, metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts of a request after its first, by operation."))
	handleErr(err)
	leaseLost, err := meter.Int64Counter(leaseLostName, metric.WithUnit("{lease}"),
		metric.WithDescription("Leases of a consume loop the broker refused to renew."))
	handleErr(err)

	ctx := context.Background()
	return queen.Hooks{
		Request: func(e queen.RequestEvent) {
			kind, ok := operationTypes[e.Operation]
			if !ok {
				return
			}
			attrs := []attribute.KeyValue{
				semconv.MessagingSystemKey.String("queen"),
				semconv.MessagingOperationName(e.Operation),
			}
			if kind.Valid() {
				attrs = append(attrs, kind)
			}
			if t := requestErrorType(e); t != "" {
				attrs = append(attrs, semconv.ErrorTypeKey.String(t))
			}
			attrs = append(attrs, serverAttrs(e.Server)...)
			set := attribute.NewSet(attrs...)
			duration.RecordSet(ctx, e.Duration.Seconds(), set)
			if e.Attempt > 1 {
				retries.Add(ctx, 1, metric.WithAttributeSet(set))
			}
			if e.Items > 0 && e.Err == nil && e.Status >= 200 && e.Status < 300 &&
				(e.Operation == "push" || e.Operation == "transaction") {
				sent.AddSet(ctx, int64(e.Items), attribute.NewSet(attrs[:2]...))
			}
		},
		LeaseLost: func(e queen.LeaseLostEvent) {
			leaseLost.Add(ctx, 1, metric.WithAttributes(semconv.MessagingSystemKey.String("queen"),
				semconv.MessagingDestinationName(e.Queue)))
		},
	}
}

// requestErrorType classifies an attempt that failed: the status class of an error answer
// (4xx, 5xx), else why no answer came (timeout, canceled, network); "" for a success.
func requestErrorType(e queen.RequestEvent) string {
	switch {
	case e.Err != nil:
		if t := errorTypeOf(e.Err); t == "timeout" || t == "canceled" {
			return t
		}
		return "network" // the attempt got no answer
	case e.Status >= 400:
		return statusClass(e.Status)
	}
	return ""
}

// serverAttrs are server.address and server.port of a broker's base URL.
func serverAttrs(base string) []attribute.KeyValue {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	attrs := []attribute.KeyValue{semconv.ServerAddress(host)}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, semconv.ServerPort(p))
	}
	return attrs
}
