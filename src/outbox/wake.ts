// How a write reaches this process's outbox worker without waiting for its poll: one wake per process, made by app/, handed to the writers through Deps and to the worker.
import type { Clock } from "../domain/clock.js";

/** What a write that recorded owed work calls, and what the worker listens to. */
export interface OutboxWake {
  /** Called after a write recorded an owed change or planned effects: this replica's worker picks them up at once. */
  owed(): void;
  /** The worker hears every `owed` from now on, until the returned function is called. */
  listen(onOwed: () => void): () => void;
}

/** The wake of one process (src/app/deps.ts builds it once; a second worker listening replaces the first). */
export function createWake(): OutboxWake {
  let listener: (() => void) | undefined;
  return {
    owed: () => listener?.(),
    listen(onOwed) {
      listener = onOwed;
      return () => {
        if (listener === onOwed) listener = undefined;
      };
    },
  };
}

/** What a write that records owed work needs: the wake, and the clock its stamps and due times read (`Deps.clock`). */
export interface Owing {
  wake: OutboxWake;
  clock: Clock;
}
