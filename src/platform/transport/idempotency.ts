// Idempotency-Key on every write of every protocol: one wrapper around a service's write methods, its records kept in a store every replica shares.
import type { Clock } from "../../domain/clock.js";
import { createHash, randomBytes } from "node:crypto";
import { create, fromBinary, toBinary, type DescMethod, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { Code, createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ApiError, invalid, REASONS, type FieldViolation } from "../../domain/errors.js";
import { sealWithKeyId, unsealWithKeyId, type Keyring } from "../../domain/secretBox.js";

/*
 * Why in front of the implementation and not in a transport: REST calls the implementation objects directly (the
 * table's dispatcher), and the fast unary path, Connect's handlers (Connect, gRPC, gRPC-Web) call the same objects
 * (src/app/services.ts). A wrapper there is the one place every protocol passes, and what it keeps (the answer as
 * a message, or the error as the service threw it) is rendered by each protocol as it renders a fresh answer: a
 * key used over REST and repeated over gRPC gets the same answer in gRPC's form.
 */

/** The request header, and the RPC metadata (lower case there), that carries the key (docs/spec/extensions.md "Idempotency keys"). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** Added to a repeated answer. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a first request may hold its key before a repeat may take it over: longer than any request runs (the
 * slowest, an admin import, has 60 s of database time), so only a first whose replica died loses its key, and
 * its caller's retry then runs instead of hearing "in progress" for a day.
 */
export const IDEMPOTENCY_LEASE_MS = 2 * 60 * 1000;
const KEY_MAX = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** An answer as kept: the response message's bytes, or the error the service threw. */
export type KeptAnswer =
  /**
   * `sealed`: the message's binary encoding, in base64, sealed with the service's keyring (an answer may hold a
   * secret: a new account's API key, a booking's private key); `response`: the same unsealed, as kept before.
   */
  | { ok: true; sealed?: string; response?: string; headers: Array<[string, string]> }
  | {
      ok: false;
      code: number;
      message: string;
      rest_message: string;
      data: Record<string, unknown>;
      http_status: number | null;
      headers: Array<[string, string]>;
      /** The error's reason, fields and what it names (absent in answers kept before they were kept). */
      reason?: string;
      field_violations?: FieldViolation[];
      info?: Record<string, string>;
    };

/** What the store found for a key when a request began. */
type Begun =
  /**
   * No answer yet: this request runs, and `token` proves it is still the one when it finishes. `since`: the
   * start of the key's day, the same for every try within it, a new one once the day is over.
   */
  | { state: "started"; token: string; since: Date }
  | { state: "running"; fingerprint: string }
  | { state: "done"; fingerprint: string; answer: KeptAnswer };

/** Where keys are kept (src/db/idempotency.ts: MongoDB, with a TTL index, so every replica sees the same). */
interface IdempotencyStore {
  /** Takes the key for a new run unless it is held by a live run or has an answer within its 24 hours (counted in the lookup, not left to a TTL). */
  begin(id: string, fingerprint: string, token: string, now: Date): Promise<Begun>;
  /** Keeps the answer of the run holding `token`. */
  finish(id: string, token: string, answer: KeptAnswer): Promise<void>;
  /** Lets the key go (the run answered something a retry should not hear again). */
  release(id: string, token: string): Promise<void>;
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** "scheduling.v1.EventService/CreateEvent": the methods that change state and take a key. */
  writes: ReadonlySet<string>;
  /**
   * Who is asking, as a string only that caller can produce (a digest of the API key; for a public write the
   * event and the booker's e-mail, or the booking's private key); it may refuse the caller (a bad key: 401), so
   * nothing is kept for a request that could not have run.
   */
  callerOf(method: DescMethod, request: unknown, ctx: HandlerContext): string | Promise<string>;
  /** Told when an answer could not be kept (the database went between the write and this). */
  onKeepFailed?(err: unknown): void;
  /** What a key's age is read against (`Deps.clock`): after its 24 hours the same request is a new one. */
  clock: Clock;
  /** Seals the answers kept (`Deps.secrets`), as every stored secret is. */
  secrets: Keyring;
  /**
   * The service's writes take no API key (public booking): their answer holds the booking's secret and anyone may
   * send one, so a key must be one nobody else can guess (PUBLIC_KEY_MIN characters: a UUID).
   */
  publicWrites?: boolean;
}

/** The shortest key of a public write: a UUID's 36 characters pass, a counter or a timestamp does not. */
const PUBLIC_KEY_MIN = 32;

/**
 * Errors that are the answer to the request as it was, and so are answered again: a validation, a conflict, a
 * missing record. Refusals of the moment (a bad key, a rate limit, a database away, a deadline, a cancelled
 * call) and failures let the key go, so the caller's retry runs.
 */
const KEPT_ERRORS: ReadonlySet<Code> = new Set([Code.InvalidArgument, Code.NotFound, Code.AlreadyExists, Code.FailedPrecondition, Code.OutOfRange, Code.PermissionDenied]);

/** The key of a request, or undefined when it has none; a malformed one, or one of a public write too short to be secret, is a 422. */
function idempotencyKeyOf(ctx: HandlerContext, publicWrite: boolean): string | undefined {
  const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER);
  if (key === null) return undefined;
  if (key.length === 0 || key.length > KEY_MAX || !PRINTABLE_ASCII.test(key)) throw invalid(`${IDEMPOTENCY_KEY_HEADER} must be 1 to ${KEY_MAX} printable ASCII characters`);
  if (publicWrite && key.length < PUBLIC_KEY_MIN) throw invalid(`idempotency key of a public write must be at least ${PUBLIC_KEY_MIN} characters`);
  return key;
}

const sha256 = (...parts: Array<string | Uint8Array>) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};

/*
 * A write whose outcome stayed unknown (its answer was lost: a 503) lets its key go, so the caller's retry runs
 * again; a write that makes something must then find what the first try made rather than make it twice or be
 * refused by it (the first booking holds the time: 409). So each try of one keyed request carries the same name
 * for its write, from the caller, the key and the request: a service that makes a record derives its id from it.
 */
const keyedWriteName = createContextKey<string | undefined>(undefined, { description: "keyed write" });

/**
 * The name every try of this keyed request shares (the caller, the Idempotency-Key, the request itself and the
 * key's day), or undefined for a call without a key. Another caller, key or body is another name, and so is the
 * same request once the key's 24 hours are over: a new request then, done again or refused for its own reasons,
 * never answered with what the old one made (a booking since canceled, answered as "booking confirmed").
 */
export function keyedWriteOf(ctx: HandlerContext): string | undefined {
  return ctx.values.get(keyedWriteName);
}

const keyUsedElsewhere = () => new ApiError(Code.InvalidArgument, "idempotency key was used with another request", { httpStatus: 422, reason: REASONS.idempotencyKeyReused });
const keyInProgress = () => new ApiError(Code.Aborted, "request with this idempotency key is in progress", { httpStatus: 409, reason: REASONS.idempotencyKeyInProgress });

function keep(method: DescMethodUnary, response: unknown, headers: Headers, secrets: Keyring): KeptAnswer {
  // Methods return what Connect makes a message of (an init object, or the message itself).
  const message = create(method.output, response as never);
  return { ok: true, sealed: sealWithKeyId(Buffer.from(toBinary(method.output, message)).toString("base64"), secrets), headers: [...headers] };
}

function keepError(err: unknown): KeptAnswer | undefined {
  if (!(err instanceof ApiError) || !KEPT_ERRORS.has(err.code)) return undefined;
  return {
    ok: false,
    code: err.code,
    message: err.rawMessage,
    rest_message: err.restMessage,
    data: err.data,
    http_status: err.httpStatus ?? null,
    headers: [...err.metadata],
    reason: err.reason,
    field_violations: [...err.fieldViolations],
    info: { ...err.info },
  };
}

/** The kept answer, as the service answered it the first time, marked as repeated. */
function replay(method: DescMethodUnary, answer: KeptAnswer, ctx: HandlerContext, secrets: Keyring): unknown {
  if (!answer.ok) {
    const headers = Object.fromEntries([...answer.headers, [REPLAYED_HEADER, "true"]]);
    throw new ApiError(answer.code as Code, answer.message, {
      restMessage: answer.rest_message,
      data: answer.data,
      httpStatus: answer.http_status ?? undefined,
      headers,
      reason: answer.reason,
      fieldViolations: answer.field_violations,
      info: answer.info,
    });
  }
  for (const [k, v] of answer.headers) ctx.responseHeader.set(k, v);
  ctx.responseHeader.set(REPLAYED_HEADER, "true");
  return fromBinary(method.output, Buffer.from(answer.sealed !== undefined ? unsealWithKeyId(answer.sealed, secrets) : (answer.response ?? ""), "base64"));
}

/** Runs one write under its key: the first runs and its answer is kept; a repeat hears it again. */
async function underKey(
  options: IdempotencyOptions,
  method: DescMethodUnary,
  key: string,
  request: unknown,
  ctx: HandlerContext,
  run: () => Promise<unknown>,
): Promise<unknown> {
  const caller = await options.callerOf(method, request, ctx);
  const id = sha256(caller, key);
  // The method and the request as its protocol decoded it: the same body over REST and over RPC is the same request.
  const fingerprint = sha256(`${method.parent.typeName}/${method.name}`, toBinary(method.input, create(method.input, request as never)));
  const token = randomBytes(12).toString("hex");
  const begun = await options.store.begin(id, fingerprint, token, options.clock.now());
  if (begun.state !== "started") {
    if (begun.fingerprint !== fingerprint) throw keyUsedElsewhere();
    if (begun.state === "running") throw keyInProgress();
    return replay(method, begun.answer, ctx, options.secrets);
  }
  ctx.values.set(keyedWriteName, sha256(id, fingerprint, begun.since.toISOString()));
  let answer: KeptAnswer | undefined;
  try {
    const response = await run();
    answer = keep(method, response, ctx.responseHeader, options.secrets);
    return response;
  } catch (err) {
    answer = keepError(err);
    throw err;
  } finally {
    // Kept before the caller hears the answer, so a repeat sent the moment it arrives is answered from it.
    const kept = answer;
    const settle = () => (kept ? options.store.finish(id, token, kept) : options.store.release(id, token));
    await settle().catch((err: unknown) => {
      options.onKeepFailed?.(err);
      settleLater(settle);
    });
  }
}

/** The first wait before keeping an answer (or letting a key go) again after the database refused it. */
const SETTLE_RETRY_FIRST_MS = 500;
/**
 * The longest wait between two tries: a database back after a silence of 20 s is heard within this (plus one
 * try's deadline), where doubling without end left a gap of 16-32 s in which every repeat heard "in progress".
 * A try is one write on the key's _id; one every few seconds for a held key is nothing to a database that is back.
 */
const SETTLE_RETRY_MAX_MS = 4000;

/**
 * Keeps trying, in the background, to keep an answer or let a key go that the database did not take (it went away
 * after the write; the answer was then most often a 503, whose retry should run): until it does, every repeat
 * hears "in progress", so waiting for the lease would hold the caller's retry for minutes after a blip of seconds.
 * Tries back off up to SETTLE_RETRY_MAX_MS, and stop at the lease, after which a repeat takes the key over anyway.
 * The run's token makes a late try harmless.
 */
function settleLater(settle: () => Promise<void>): void {
  const until = performance.now() + IDEMPOTENCY_LEASE_MS;
  const attempt = (wait: number) => {
    if (performance.now() + wait >= until) return;
    setTimeout(() => void settle().catch(() => attempt(Math.min(wait * 2, SETTLE_RETRY_MAX_MS))), wait).unref();
  };
  attempt(SETTLE_RETRY_FIRST_MS);
}

/**
 * The service with an Idempotency-Key on each of its write methods (`options.writes`). A call without the header
 * runs as before; a malformed key is a 422 before anything runs.
 */
export function withIdempotency(service: DescService, impl: ServiceImpl<DescService>, options: IdempotencyOptions): ServiceImpl<DescService> {
  const methods = impl as unknown as Record<string, (req: unknown, ctx: HandlerContext) => unknown>;
  const wrapped: Record<string, (req: unknown, ctx: HandlerContext) => unknown> = { ...methods };
  for (const m of service.methods) {
    const original = methods[m.localName];
    if (m.methodKind !== "unary" || typeof original !== "function" || !options.writes.has(`${service.typeName}/${m.name}`)) continue;
    wrapped[m.localName] = (req, ctx) => {
      let key: string | undefined;
      try {
        key = idempotencyKeyOf(ctx, options.publicWrites === true);
      } catch (err) {
        return Promise.reject(err);
      }
      if (key === undefined) return original.call(impl, req, ctx);
      return underKey(options, m as DescMethodUnary, key, req, ctx, async () => original.call(impl, req, ctx));
    };
  }
  return wrapped as unknown as ServiceImpl<DescService>;
}
