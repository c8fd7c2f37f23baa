// One deadline for a whole provider call, whatever the server does: its signal aborts and the call fails as unreachable.
import { ProviderError } from "./types.js";

/** Runs `work` under a deadline: its signal aborts and the promise rejects when the time is up, whatever `work` does. */
export async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      /*
       * Work that heeds the signal rejects at once with what it was doing (a read still computing says the
       * calendar took too long, one still waiting for the server that it did not answer): one turn of the event
       * loop later this generic reason is only for work that does not.
       */
      setImmediate(() => reject(new ProviderError("unreachable", `no answer within ${ms} ms`)));
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
