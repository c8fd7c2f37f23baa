// One database read shared by every caller that asks for the same thing within one turn of the event loop.
const pending = new Map<string, Promise<unknown>>();

/**
 * The read is sent (setImmediate) only after every caller sharing it has asked, so it sees every write that had
 * returned before any of them asked: sharing it is as fresh as each caller reading on its own, across replicas
 * too. A read already sent is never shared with a later caller (it may predate that caller's write). Used where
 * concurrent readers of one thing each paid a round trip (bench:bookings, ten readers after a write). Every caller
 * gets the same value: none may modify it. `key` must name the read exactly (its collection and whole filter).
 */
export function readOncePerTurn<T>(key: string, read: () => Promise<T>): Promise<T> {
  let shared = pending.get(key) as Promise<T> | undefined;
  if (!shared) {
    shared = new Promise<T>((resolve, reject) => {
      setImmediate(() => {
        // Closed before the query is sent: a caller asking from now on gets the next one.
        pending.delete(key);
        read().then(resolve, reject);
      });
    });
    pending.set(key, shared);
  }
  return shared;
}
