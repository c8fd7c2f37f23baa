// Who is calling: the account of an API key (cached as a lease), the rate limits and booking caps, as one object made at start.
import { createHash } from "node:crypto";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { apiKeyDigest, MISSING_KEY, missingKeyHint } from "../../domain/apiKey.js";
import type { Clock } from "../../domain/clock.js";
import { tooManyRequests, unauthenticated } from "../../domain/errors.js";
import type { UserDoc } from "../../db/models/user.js";
import { accountsByKey } from "./keys.js";
import type { Notify } from "../../domain/owed.js";
import { DistinctInWindow, RateLimiter, type LimitRule, type Verdict } from "./rateLimit.js";
import type { AccountLease } from "./writes.js";
import { PEER_ADDRESS_HEADER } from "../../platform/transport/listen.js";

export interface ServiceDeps {
  /** Public website address without a trailing slash. */
  appUrl(): string;
  /** AES-256 key for the stored API key copies. */
  apiKeyEncryptionKey: Buffer;
  adminToken: string | undefined;
  /** The caller's account and the limits (`createAccess`). */
  access: Access;
  /** The one source of time (src/domain/clock.ts). */
  clock: Clock;
}

type Waiting = Array<{ resolve(u: UserDoc | null): void; reject(e: unknown): void }>;

/** Keys whose digests are remembered at most; a full memo starts over (keys in steady use come straight back). */
const MAX_REMEMBERED_DIGESTS = 256;

/**
 * The digests of the API keys that called lately. Why: every authenticated call hashed its key (SHA-256 and its
 * hex string, ~3% of a gRPC GetUser's instructions) though a client sends the same key call after call. A key's
 * digest never changes, so a remembered one is always right; what the key may do is still decided by the
 * account lookup (the lease) on every call.
 */
class DigestMemo {
  private readonly byKey = new Map<string, string>();

  of(key: string): string {
    let digest = this.byKey.get(key);
    if (digest === undefined) {
      digest = apiKeyDigest(key);
      if (this.byKey.size >= MAX_REMEMBERED_DIGESTS) this.byKey.clear();
      this.byKey.set(key, digest);
    }
    return digest;
  }
}

/** An account as read, and until when (performance.now()) this replica may answer from it. */
interface CachedAccount {
  user: UserDoc;
  expiresAt: number;
  refreshing: boolean;
}

/**
 * Whether two values read from the database hold the same data: plain objects and arrays field by field, dates by
 * their time, ObjectIds and bytes by their value. Anything else of a class of its own counts as different, so a
 * doubt makes a new snapshot, never keeps a changed one.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameData(v, b[i]));
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Uint8Array) return b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  const proto = Object.getPrototypeOf(a);
  if (proto !== Object.getPrototypeOf(b)) return false;
  if ((a as { _bsontype?: unknown })._bsontype === "ObjectId") return (a as { equals(o: unknown): boolean }).equals(b);
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Accounts kept at most. Entries are kept in the order they were read, so expired ones are dropped from the front
 * on every fill and the cache holds only accounts used within the last lease (a fresh account is about 1 KB).
 */
const MAX_CACHED_ACCOUNTS = 1000;

/**
 * Resolves API key digests to accounts: from a short-lived cache, else many requests per database read.
 *
 * The cache is a lease, and it keeps "the old key stops working immediately" on every replica. An entry lives
 * `ttlMs` from the moment its read STARTED, so anything it holds was read before `expiresAt - ttlMs`. Every
 * write to an account (key regeneration, profile, availability, picture) answers only `ttlMs` after it
 * committed (`settle` in writes.ts): by then every entry on every replica that could hold the account as it was
 * has expired, without any message between replicas. So once a regeneration has answered, the old key fails
 * everywhere, this replica included; a request racing the regeneration may still pass, as it could without a
 * cache. Unknown keys are never cached: a new account's key works at once.
 *
 * Reads are batched: while one read is in flight, arriving requests queue, and the next read serves all of
 * them with one `$in` query (one digest per key). An entry in the second half of its life is re-read in the
 * background on use, so a key in steady use never waits for a read. `ttlMs` 0: no cache, every request is
 * answered by a read that started after it arrived, and writes do not wait.
 */
class AccountLookup {
  private queued = new Map<string, Waiting>();
  private inFlight = 0;
  private cache = new Map<string, CachedAccount>();
  ttlMs = 0;

  constructor(
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  /** The cached account of `digest`, if its lease still runs; starts a background re-read when half of it is gone. */
  cached(digest: string): UserDoc | undefined {
    const entry = this.cache.get(digest);
    if (entry === undefined) return undefined;
    const now = performance.now();
    if (now >= entry.expiresAt) {
      this.cache.delete(digest);
      return undefined;
    }
    if (!entry.refreshing && now >= entry.expiresAt - this.ttlMs / 2) {
      entry.refreshing = true;
      // The result lands in the cache; a failed re-read leaves the entry to expire.
      this.byDigest(digest).catch(() => (entry.refreshing = false));
    }
    return entry.user;
  }

  byDigest(digest: string): Promise<UserDoc | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.queued.get(digest);
      if (waiting) waiting.push({ resolve, reject });
      else this.queued.set(digest, [{ resolve, reject }]);
      this.flush();
    });
  }

  private remember(digest: string, user: UserDoc | null, expiresAt: number): void {
    this.cache.delete(digest);
    const now = performance.now();
    for (const [oldest, entry] of this.cache) {
      if (entry.expiresAt > now && this.cache.size < MAX_CACHED_ACCOUNTS) break;
      this.cache.delete(oldest);
    }
    if (user !== null) this.cache.set(digest, { user, expiresAt, refreshing: false });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queued.size > 0) {
      const batch = new Map<string, Waiting>();
      for (const [digest, waiting] of this.queued) {
        batch.set(digest, waiting);
        this.queued.delete(digest);
        if (batch.size === this.maxBatch) break;
      }
      this.inFlight++;
      const startedAt = performance.now();
      // Through account_keys (keys.ts): the digests' claims, then their accounts, each by _id. Straight to the
      // driver's collections there: Mongoose's query building was a tenth of the read's CPU.
      let read: Promise<Map<string, UserDoc>>;
      try {
        read = accountsByKey("key", [...batch.keys()]);
      } catch (err) {
        read = Promise.reject(err);
      }
      read
        .then(
          (users) => {
            // Frozen (its top level): one snapshot goes to every request of the batch and of the lease, and what
            // is made from it (GetUser's reply, src/features/accounts/service.ts) is made once; nothing may change it under them.
            const found = new Map([...users].map(([digest, u]) => [digest, Object.freeze(u)]));
            const caching = this.ttlMs > 0;
            for (const [digest, waiting] of batch) {
              const read = found.get(digest) ?? null;
              // An account read again as it was is kept as the snapshot it was (with the new read's lease): what was
              // made from it (GetUser's reply and its encodings) is not made again for every lease of a key in use.
              const before = this.cache.get(digest)?.user;
              const user = read !== null && before !== undefined && sameData(before, read) ? before : read;
              if (caching) this.remember(digest, user, startedAt + this.ttlMs);
              for (const w of waiting) w.resolve(user);
            }
          },
          (err: unknown) => {
            for (const waiting of batch.values()) for (const w of waiting) w.reject(err);
            // The database failed after the queued requests arrived: they get the same answer now rather than
            // after another server-selection timeout each, which would add up past the 2 s a request may take.
            const queued = this.queued;
            this.queued = new Map();
            for (const waiting of queued.values()) for (const w of waiting) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  }
}

interface RateLimits {
  /** Per account (one key each) on every authenticated method. */
  perKey: LimitRule;
  /** Per client address on the public booking methods. */
  publicPerAddress: LimitRule;
  /** Proxies in front of the service that append to X-Forwarded-For; 0 trusts none and uses the peer address. */
  trustedProxyHops: number;
  /** Bookings and reschedules per booker e-mail per host (a day by default). */
  bookingsPerBooker: LimitRule;
  /** Bookings and reschedules per host, whoever books. */
  bookingsPerHost: LimitRule;
  /** Messages to guests per host (one per guest address per public booking, cancel or reschedule). */
  guestMailsPerHost: LimitRule;
  /** Different booker e-mails one client address may book with one host per window (an hour). */
  newBookersPerAddress: LimitRule;
}

/** The 429 of the per-address cap on new bookers: says whom it counts and when to come back. */
const NEW_BOOKERS_REFUSED = "this network address has booked as many different people with this host as an hour allows; try again later";


/** Services any visitor may call without a key: each of their calls counts against the caller's address. */
const PUBLIC_SERVICES: ReadonlySet<string> = new Set(["scheduling.v1.PublicBookingService"]);

/**
 * Puts `before` in front of every unary method of a service implementation. Applied where the implementations are
 * created (src/app/services.ts), so REST and every RPC protocol call the guarded methods. A `before` that throws or
 * rejects answers the call with its error, as the method's own refusals do.
 */
export function guardUnaryMethods(
  service: DescService,
  impl: ServiceImpl<DescService>,
  before: (method: DescMethod, req: unknown, ctx: HandlerContext) => void | Promise<void>,
): ServiceImpl<DescService> {
  const methods = impl as unknown as Record<string, (req: unknown, ctx: HandlerContext) => unknown>;
  const guarded: Record<string, (req: unknown, ctx: HandlerContext) => unknown> = { ...methods };
  for (const m of service.methods) {
    const original = methods[m.localName];
    if (m.methodKind !== "unary" || typeof original !== "function") continue;
    guarded[m.localName] = (req, ctx) => {
      let checked: void | Promise<void>;
      try {
        checked = before(m, req, ctx);
      } catch (err) {
        return Promise.reject(err);
      }
      // A synchronous check costs no promise on the way to the method.
      return checked instanceof Promise ? checked.then(() => original.call(impl, req, ctx)) : original.call(impl, req, ctx);
    };
  }
  return guarded as unknown as ServiceImpl<DescService>;
}

/** What `createAccess` is made from (src/app/config.ts). */
export interface AccessSettings {
  /** ACCOUNT_CACHE_MS: how long a replica may answer from an account it read; 0: no cache. */
  accountCacheMs: number;
  rateLimits: RateLimits;
  clock: Clock;
}

/** The account found by `admitKeyHolder` for this call, which `authenticate` then takes instead of looking again. */
const IDENTIFIED = createContextKey<Readonly<UserDoc> | undefined>(undefined, { description: "account of the API key, found before the body was read" });

/** Who is calling, and how much they may do: one per process, made at start and handed to every service. */
export class Access implements AccountLease {
  // One read in flight: a request waits for at most that read and its own, and batches grow with the load.
  private readonly accounts = new AccountLookup(1, 500);
  private readonly keyLimiter: RateLimiter;
  private readonly addressLimiter: RateLimiter;
  private readonly bookerLimiter: RateLimiter;
  private readonly hostLimiter: RateLimiter;
  private readonly guestMailLimiter: RateLimiter;
  private readonly newBookers: DistinctInWindow;
  private readonly trustedProxyHops: number;
  /** The one source of time (`Deps.clock`): the limits' windows, and what the services given only `access` read. */
  readonly clock: Clock;
  private readonly digests = new DigestMemo();
  private lastCounted: { user: Readonly<UserDoc>; id: string } | undefined;

  constructor(settings: AccessSettings) {
    this.clock = settings.clock;
    const now = () => settings.clock.nowMs();
    this.accounts.ttlMs = settings.accountCacheMs;
    const limits = settings.rateLimits;
    this.keyLimiter = new RateLimiter("key", limits.perKey, now);
    this.addressLimiter = new RateLimiter("address", limits.publicPerAddress, now);
    this.bookerLimiter = new RateLimiter("booker", limits.bookingsPerBooker, now);
    this.hostLimiter = new RateLimiter("host", limits.bookingsPerHost, now);
    this.guestMailLimiter = new RateLimiter("guestmail", limits.guestMailsPerHost, now);
    this.newBookers = new DistinctInWindow("newbookers", limits.newBookersPerAddress, now);
    this.trustedProxyHops = limits.trustedProxyHops;
  }

  /**
   * Resolves the account of the `x-api-key` header (case-insensitive, as Headers are), then counts the request
   * against the account's rate limit. Every authenticated method of every protocol passes here, so this is the
   * one place the per-key limit lives.
   */
  readonly authenticate = (ctx: HandlerContext): Promise<Readonly<UserDoc>> => {
    try {
      const user = this.authenticateNow(ctx);
      return user instanceof Promise ? user : Promise.resolve(user);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  /**
   * `authenticate` without a promise when none is needed: the account is in the cache and the limit is counted
   * from this replica's lease, which is nearly every call. Throws what `authenticate` rejects with. Why: the
   * cheapest methods (GetUser) answer from the account alone, and three async frames (the method, this, the
   * lookup) were a promise and a microtask each on every call.
   */
  authenticateNow(ctx: HandlerContext): Readonly<UserDoc> | Promise<Readonly<UserDoc>> {
    const user = ctx.values.get(IDENTIFIED) ?? this.identify(ctx);
    return user instanceof Promise ? user.then((u) => this.countCall(u)) : this.countCall(user);
  }

  /** Counts the call against its key's rate limit; the account once it is counted, or the 429's error. */
  private countCall(user: Readonly<UserDoc>): Readonly<UserDoc> | Promise<Readonly<UserDoc>> {
    if (!this.keyLimiter.enabled) return user;
    // The last account counted and its id's hex string: a key in steady use is counted under the same account
    // snapshot for a whole lease, and toHexString made a Buffer and a string on every call.
    if (this.lastCounted?.user !== user) this.lastCounted = { user, id: user._id.toHexString() };
    const counted = this.keyLimiter.consume(this.lastCounted.id);
    if (counted instanceof Promise) return counted.then((verdict) => admitted(verdict, user));
    return admitted(counted, user);
  }

  /**
   * Checks the caller's key from the headers alone, before the request body is read (src/platform/transport/fastUnary.ts,
   * multipart uploads in src/platform/rest/router.ts): a caller without a valid key gets its 401 / UNAUTHENTICATED without
   * the service reading, let alone holding, megabytes of body. The call's own `authenticate` takes the account
   * found here (no second lookup) and counts the call against the key's rate limit as before.
   */
  readonly admitKeyHolder = async (ctx: HandlerContext): Promise<void> => {
    // Asked again for the same call (a write under an Idempotency-Key after a large body's early check): once is enough.
    if (ctx.values.get(IDENTIFIED) !== undefined) return;
    ctx.values.set(IDENTIFIED, await this.identify(ctx));
  };

  /**
   * Checks again that the call's key still names its account, as a new call's would be (the lease's cache, else one
   * batched read), without counting against the rate limit: a stream opened with a key re-asks before each delivery,
   * so once a regeneration has answered (every replica's lease of the old key has run out by then, see
   * AccountLookup) no replica delivers anything more to a stream of the old key. Throws UNAUTHENTICATED when it
   * does not.
   */
  readonly keyStillValid = (ctx: HandlerContext, account: Pick<UserDoc, "_id">): void | Promise<void> => {
    const same = (user: Readonly<UserDoc>) => {
      if (!user._id.equals(account._id)) throw unauthenticated("Invalid api_key");
    };
    const user = this.identify(ctx);
    return user instanceof Promise ? user.then(same) : same(user);
  };

  /** How long a replica may answer from an account as read: every write to an account waits it out (writes.ts). */
  get accountLeaseMs(): number {
    return this.accounts.ttlMs;
  }

  /**
   * Counts one public booking or reschedule against the host's caps: every address it makes the service write to
   * (the booker and each guest, normalised) per host, the host's bookings, and the host's messages to guests.
   * Counted in MongoDB like the rate limits (rateLimit.ts), so every replica shares them. A host can rely on them
   * whatever addresses the bookings come from; an attempt counts once it has passed every check but the write
   * itself. An address past its cap, or the host past its bookings, is a 429; past the guest-mail cap the booking
   * goes on and the answer is that the guests are not to be mailed (the booker tells them).
   */
  async limitBookingsOf(hostId: string, bookerEmail: string, guests: readonly string[] = []): Promise<Notify> {
    const booker = await this.bookerLimiter.consume(`${hostId}:${bookerEmail}`);
    if (!booker.allowed) {
      throw tooManyRequests(booker.retryAfterSeconds, "this e-mail address has made as many bookings with this host as a day allows; try again later");
    }
    const others = guests.filter((g) => g !== bookerEmail);
    // Different addresses, different counters: counted together.
    const verdicts = await Promise.all(others.map((g) => this.bookerLimiter.consume(`${hostId}:${g}`)));
    const over = verdicts.findIndex((v) => !v.allowed);
    if (over >= 0) {
      const v = verdicts[over] as { retryAfterSeconds: number };
      throw tooManyRequests(v.retryAfterSeconds, `the guest ${others[over]} has been in as many bookings with this host as a day allows; try again later`);
    }
    const host = await this.hostLimiter.consume(hostId);
    if (!host.allowed) throw tooManyRequests(host.retryAfterSeconds, "this host takes no more bookings today; try again later");
    return { booker: true, guests: await this.guestMailsAllowed(hostId, guests) };
  }

  /**
   * Counts a new booking's booker against the cap on different people one client address may book with one host
   * per hour: one address booked 93 strangers of one host in 8.6 s, each mailed a confirmation (issue 29), which
   * the per-e-mail caps cannot see (every e-mail is new). A booker this address already booked with this host this
   * hour is not counted again (a person booking twice, retrying, or racing their own bookings: counted once);
   * one refused stays refused. Reschedules and cancels name no new person and are not counted. Call before
   * limitBookingsOf.
   */
  async limitNewBookerOf(ctx: HandlerContext, hostId: string, bookerEmail: string): Promise<void> {
    if (!this.newBookers.enabled) return;
    const address = this.clientAddress(ctx);
    // The e-mail as a digest: the marks are for comparing only.
    const booker = createHash("sha256").update(bookerEmail).digest("hex").slice(0, 32);
    const verdict = await this.newBookers.admit(`${hostId}:${address}`, booker);
    if (!verdict.allowed) throw tooManyRequests(verdict.retryAfterSeconds, NEW_BOOKERS_REFUSED);
  }

  /**
   * Counts a public cancel against the same per-address caps (the booker and each guest are written to again).
   * A cancel is never refused (it frees a slot, and a booker must be able to take a booking back); an address
   * past its cap is simply not mailed: the booker when theirs is, the guests when any of theirs is or the host's
   * guest-mail cap is reached.
   */
  async limitCancelOf(hostId: string, bookerEmail: string, guests: readonly string[]): Promise<Notify> {
    const booker = (await this.bookerLimiter.consume(`${hostId}:${bookerEmail}`)).allowed;
    const verdicts = await Promise.all(guests.filter((g) => g !== bookerEmail).map((g) => this.bookerLimiter.consume(`${hostId}:${g}`)));
    const guestsAllowed = verdicts.every((v) => v.allowed);
    return { booker, guests: guestsAllowed && (await this.guestMailsAllowed(hostId, guests)) };
  }

  /**
   * Counts one reminder e-mail to the address a booker typed against that address's cap with this host
   * (reminders.md: reminders count against the booker limits only where they go to addresses the booker typed).
   * False once the address is past it: the reminder is not sent to it.
   */
  async mayRemindBooker(hostId: string, bookerEmail: string): Promise<boolean> {
    return (await this.bookerLimiter.consume(`${hostId}:${bookerEmail}`)).allowed;
  }

  /**
   * Counts one message per guest address against the host's guest-mail cap; false (mail none of them) once it is
   * reached. Counts taken before the refusal stay spent: stricter, never looser, as the rate limits are.
   */
  private async guestMailsAllowed(hostId: string, guests: readonly string[]): Promise<boolean> {
    if (!this.guestMailLimiter.enabled) return true;
    for (let i = 0; i < guests.length; i++) {
      if (!(await this.guestMailLimiter.consume(hostId)).allowed) return false;
    }
    return true;
  }

  /** Puts the per-address limit in front of every unary method of a public service. */
  withPublicLimits(service: DescService, impl: ServiceImpl<DescService>): ServiceImpl<DescService> {
    if (!PUBLIC_SERVICES.has(service.typeName)) return impl;
    return guardUnaryMethods(service, impl, (_method, _req, ctx) => this.limitPublicCaller(ctx));
  }

  /** Counts a keyless request against its client address. */
  private async limitPublicCaller(ctx: HandlerContext): Promise<void> {
    if (!this.addressLimiter.enabled) return;
    const verdict = await this.addressLimiter.consume(this.clientAddress(ctx));
    if (!verdict.allowed) throw tooManyRequests(verdict.retryAfterSeconds);
  }

  /** The caller's address: the peer, or the entry the outermost trusted proxy appended to X-Forwarded-For. */
  private clientAddress(ctx: HandlerContext): string {
    const peer = ctx.requestHeader.get(PEER_ADDRESS_HEADER) ?? "";
    if (this.trustedProxyHops === 0) return peer;
    const forwarded = (ctx.requestHeader.get("x-forwarded-for") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    return forwarded.length === 0 ? peer : forwarded[Math.max(0, forwarded.length - this.trustedProxyHops)];
  }

  /** The account of the request's key (without a promise when it is cached), or the error a bad or missing key gets (thrown); nothing is counted. */
  private identify(ctx: HandlerContext): Readonly<UserDoc> | Promise<Readonly<UserDoc>> {
    const key = ctx.requestHeader.get("x-api-key");
    if (key === null || key === "") {
      const hint = missingKeyHint(ctx.requestHeader.get("authorization"));
      throw unauthenticated(MISSING_KEY, hint === undefined ? undefined : { hint });
    }
    const digest = this.digests.of(key);
    const cached = this.accounts.cached(digest);
    if (cached !== undefined) return cached;
    return this.accounts.byDigest(digest).then((user) => {
      if (!user) throw unauthenticated("Invalid api_key");
      return user;
    });
  }
}

/** The account, or the 429 of a verdict that refuses it. */
function admitted(verdict: Verdict, user: Readonly<UserDoc>): Readonly<UserDoc> {
  if (!verdict.allowed) throw tooManyRequests(verdict.retryAfterSeconds);
  return user;
}
