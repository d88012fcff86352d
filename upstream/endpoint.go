package upstream

import "context"

// endpointKey carries, in a call's context, the endpoint it is made for.
type endpointKey struct{}

// WithEndpoint returns ctx carrying the endpoint a call is made for: the
// path as configured (the entry's path, placeholders unfilled:
// /v1/{asset}/network-data/supply), so that upstream_requests_total
// counts the calls of each endpoint with a label set the configuration
// file bounds. List sets its listing path itself; a call without one is
// counted with endpoint="".
func WithEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}

// endpointOf is the endpoint ctx carries, or "".
func endpointOf(ctx context.Context) string {
	s, _ := ctx.Value(endpointKey{}).(string)
	return s
}
