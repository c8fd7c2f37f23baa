// Refuses a service's writes while what they change cannot be kept (DATA_DIR cannot be written): 503 `data cannot be saved`, never a confirmation of a write that would be lost.
import type { DescService } from "@bufbuild/protobuf";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../domain/errors.js";

/** How soon a refused write may be tried again: the saver tries every 5 s (src/db/dataDir.ts SAVE_EVERY_MS). */
const RETRY_AFTER_SECONDS = 5;

/**
 * The service with each of its write methods (`writes`: "scheduling.v1.EventService/CreateEvent") refused while
 * `notKept()` names a reason: REST 503 `data cannot be saved` with Retry-After, RPC UNAVAILABLE (extensions.md
 * "Running"). Reads go on. The reason itself is for operators (/healthz, the log), not for every caller.
 */
export function withWriteGate(service: DescService, impl: ServiceImpl<DescService>, writes: ReadonlySet<string>, notKept: () => string | undefined): ServiceImpl<DescService> {
  const methods = impl as unknown as Record<string, (req: unknown, ctx: HandlerContext) => unknown>;
  const gated: Record<string, (req: unknown, ctx: HandlerContext) => unknown> = { ...methods };
  for (const m of service.methods) {
    const original = methods[m.localName];
    if (typeof original !== "function" || !writes.has(`${service.typeName}/${m.name}`)) continue;
    gated[m.localName] = (req, ctx) => {
      if (notKept() !== undefined) {
        return Promise.reject(new ApiError(Code.Unavailable, "data cannot be saved", { httpStatus: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }));
      }
      return original.call(impl, req, ctx);
    };
  }
  return gated as unknown as ServiceImpl<DescService>;
}
