// Turns: at most so many holders at once in the whole process, the others waiting in the order they came.

/**
 * A queue of turns: the function returned resolves once the caller's turn has come, with the function that ends it
 * (safe to call more than once). A waiter is handed the ending turn's place, so nobody arriving in between can take it too.
 */
export function turns(atOnce: number): () => Promise<() => void> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const leave = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return async () => {
    if (running >= atOnce) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    let over = false;
    return () => {
      if (over) return;
      over = true;
      leave();
    };
  };
}
