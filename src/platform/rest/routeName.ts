// The route pattern a request was answered by, for handlers that match paths themselves (the REST table), read by the log and metrics.

// It rides on the request object itself: a property under a private symbol costs less than a WeakMap entry, which
// the garbage collector must treat as an ephemeron on every collection.
const ROUTE_NAME = Symbol("route name");
type Named = { [ROUTE_NAME]?: string };

/** Names the route pattern that answers a request. */
export function nameRoute(req: object, name: string): void {
  (req as Named)[ROUTE_NAME] = name;
}

/** The name given by `nameRoute`, if any. */
export function routeNameOf(req: object): string | undefined {
  return (req as Named)[ROUTE_NAME];
}
