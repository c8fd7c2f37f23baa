// What this replica runs at once, per account and per destination, and the rest a failing destination takes (pure): the state the fairness rules read.
import { destinationPauseMs } from "./retry.js";

/*
 * Fairness. Effects go to outside systems that may answer slowly or never (a webhook receiver that hangs holds a
 * worker for the whole delivery timeout). Three rules keep one account's troubles its own:
 * - an account runs at most `perAccount` effects at once on a replica, so the others always have the rest of the
 *   workers (with R replicas an account holds at most R x perAccount of R x concurrency);
 * - a free worker takes the oldest due effect of an account that has nothing running here first, and only when
 *   there is none the oldest due effect of any account under its share (src/outbox/claim.ts): a newly due effect
 *   of another account starts at the next free worker, however many effects of the busy account are due before it;
 * - effects of one destination (a webhook, a calendar; the kind names it) run one at a time per replica, and a
 *   destination that fails rests (Troubles below): its untried effects wait 30 s, then 1 min, 2 min ... 30 min
 *   after each failure in a row, so a dead receiver costs one try at a time instead of one per effect, and the
 *   account's other destinations get its share meanwhile. Effects that have failed already keep their own retry
 *   schedule.
 */

/** What the rules need of an effect: whose it is and where it goes. */
export interface Placed {
  account: string;
  destination: string | null;
}

/** The effects running on this replica, counted per account and per destination; an entry leaves at 0. */
export class Workload {
  private readonly byAccount = new Map<string, number>();
  private readonly byDestination = new Map<string, number>();

  constructor(private readonly perAccount: number) {}

  begin(e: Placed): void {
    count(this.byAccount, e.account, 1);
    if (e.destination !== null) count(this.byDestination, e.destination, 1);
  }

  end(e: Placed): void {
    count(this.byAccount, e.account, -1);
    if (e.destination !== null) count(this.byDestination, e.destination, -1);
  }

  /** Whether an effect may start here now: its account under its share, its destination (if any) not busy. */
  admits(e: Placed): boolean {
    return (this.byAccount.get(e.account) ?? 0) < this.perAccount && (e.destination === null || !this.byDestination.has(e.destination));
  }

  /** Accounts with anything running here: their effects come after every idle account's. */
  busyAccounts(): string[] {
    return [...this.byAccount.keys()];
  }

  /** Accounts at their share: none of theirs may start. */
  fullAccounts(): string[] {
    return [...this.byAccount].filter(([, n]) => n >= this.perAccount).map(([a]) => a);
  }

  /** Destinations with an effect running here: none more of theirs may start. */
  busyDestinations(): string[] {
    return [...this.byDestination.keys()];
  }
}

function count(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

/** Destinations whose failures in a row this replica remembers at most (the oldest is forgotten first). */
const TROUBLED_DESTINATIONS_MAX = 10_000;

/** Destinations that failed, as this replica learned from its own tries: failures in a row, and until when they rest. */
export class Troubles {
  /** In the order last touched. */
  private readonly troubled = new Map<string, { failures: number; until: number }>();

  constructor(private readonly retryScale: number) {}

  /** Until when (ms since the epoch) new effects of the destination wait; undefined: they need not. */
  restingUntil(destination: string): number | undefined {
    return this.troubled.get(destination)?.until;
  }

  succeeded(destination: string): void {
    this.troubled.delete(destination);
  }

  /** A failure that may heal: returns until when the destination rests. */
  failed(destination: string, now: number): number {
    const failures = (this.troubled.get(destination)?.failures ?? 0) + 1;
    const until = now + destinationPauseMs(failures, this.retryScale);
    // Deleted and set again: the map keeps the order last touched, so the oldest goes first when it is full.
    this.troubled.delete(destination);
    this.troubled.set(destination, { failures, until });
    if (this.troubled.size > TROUBLED_DESTINATIONS_MAX) this.troubled.delete(this.troubled.keys().next().value as string);
    return until;
  }
}
