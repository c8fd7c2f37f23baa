// Standard gRPC health checking service (grpc.health.v1.Health: Check, List, Watch) implemented as a Connect service.
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../../gen/grpc/health/v1/health_pb.js";
import { KEYLESS_READ_MAX_BYTES } from "../transport/services.js";

/** How often Watch re-evaluates the serving status. */
const HEALTH_WATCH_POLL_MS = 1000;

/**
 * Registers grpc.health.v1.Health on the router.
 *
 * The overall server ("") and every name in `serviceNames` (the services the server mounts)
 * report SERVING while `isServing()` returns true and NOT_SERVING otherwise. Check on any other
 * name fails with NOT_FOUND; Watch on any other name reports SERVICE_UNKNOWN and keeps the stream
 * open, as the gRPC health-checking spec requires.
 */
export function registerHealth(
  router: ConnectRouter,
  isServing: () => boolean | Promise<boolean>,
  serviceNames: readonly string[],
): void {
  const known = new Set<string>(["", ...serviceNames]);

  const statusOf = async (service: string): Promise<ServingStatus> => {
    if (!known.has(service)) return ServingStatus.SERVICE_UNKNOWN;
    return (await isServing()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };

  // Anyone may call it: its messages are held to the keyless limit, as the public booking service's are.
  router.service(Health, {
    async check(req) {
      if (!known.has(req.service)) {
        throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      }
      return { status: await statusOf(req.service) };
    },

    async list() {
      const statuses: Record<string, { status: ServingStatus }> = {};
      for (const name of known) statuses[name] = { status: await statusOf(name) };
      return { statuses };
    },

    async *watch(req, ctx: HandlerContext) {
      let last = await statusOf(req.service);
      yield { status: last };
      while (await sleep(HEALTH_WATCH_POLL_MS, ctx.signal)) {
        const current = await statusOf(req.service);
        if (current !== last) {
          last = current;
          yield { status: current };
        }
      }
    },
  }, { readMaxBytes: KEYLESS_READ_MAX_BYTES });
}

/** Resolves true after `ms`, or false as soon as `signal` aborts (immediately if it already has). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
