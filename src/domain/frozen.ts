// Answers built once from a snapshot that cannot change, and what is derived from them kept beside them.

/**
 * Freezes a message (or any plain data) and everything it holds, so it can be handed out again and again and
 * what was derived from it (its encodings) stays true. Typed arrays cannot be frozen in JavaScript, so a value
 * holding one (a `bytes` field) is refused rather than half frozen.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  if (ArrayBuffer.isView(value)) throw new TypeError("deepFreeze: a typed array cannot be frozen");
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}

/**
 * What `make` derives from `key`, computed once per frozen key and remembered for as long as the key lives. An
 * unfrozen key could change after the value was made, so it gets a fresh one every time. The memo is asked first:
 * only frozen keys are ever remembered, and a frozen object stays frozen, so a remembered key needs no second
 * Object.isFrozen (a call into the runtime that walks the properties of a large object, twice per gRPC GetUser).
 */
export function onceFor<K extends object, V>(memo: WeakMap<K, V>, key: K, make: (key: K) => V): V {
  let value = memo.get(key);
  if (value !== undefined) return value;
  if (!Object.isFrozen(key)) return make(key);
  value = make(key);
  memo.set(key, value);
  return value;
}
