// How a booking write reaches this process's outbox worker without waiting for its poll: the write calls `effectsOwed`, the worker listens.

let listener: (() => void) | undefined;

/** Called after a booking write recorded an owed change: this replica's worker picks it up at once. */
export function effectsOwed(): void {
  listener?.();
}

/** The worker hears every `effectsOwed` from now on, until the returned function is called. */
export function listenForOwed(onOwed: () => void): () => void {
  listener = onOwed;
  return () => {
    if (listener === onOwed) listener = undefined;
  };
}
