package upstream

import "context"

// endpointKey carries, in a call's context, the endpoint it is made for.
type endpointKey struct{}

// WithEndpoint returns ctx carrying the endpoint a call is made for, the
// path as configured (placeholders unfilled), so that the endpoint label
// of upstream_requests_total is bounded by the file; "" without one.
func WithEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}
