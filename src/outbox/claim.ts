// Claiming due effects for this replica, several at once: the oldest first, idle accounts before busy ones, within each account's share and one per destination, leased together in one write, with what their earlier tries left read in one go.
import mongoose from "mongoose";
import { EffectModel, type EffectAttemptDoc, type EffectDoc } from "../db/models/effect.js";
import type { Clock } from "../domain/clock.js";
import { outboxWorkDb } from "../db/outboxConnection.js";
import { triesOf } from "./record.js";
import type { Placed, Troubles, Workload } from "./share.js";

/** An effect this replica just leased, as it was before (who held it, how many tries it had), and its recorded tries. */
export interface Claimed {
  doc: EffectDoc;
  before: EffectDoc;
  tries: Pick<EffectAttemptDoc, "attempt" | "ok">[];
}

export interface ClaimOptions {
  /** This replica's name on its leases. */
  owner: string;
  leaseMs: number;
  /** The kinds this replica runs. */
  kindNames: readonly string[];
  /** The destinations resting after a failure, as this replica knows at once (the database hears of it later). */
  troubles: Troubles;
  /** What due times and leases are read against (`Deps.clock`). */
  clock: Clock;
}

export const placeOf = (doc: Pick<EffectDoc, "user_id" | "destination">): Placed => ({ account: doc.user_id.toHexString(), destination: doc.destination });

/** Up to `limit` due effects, oldest due first, leaving out the accounts and destinations given (nothing is written). */
async function due(opts: ClaimOptions, now: Date, accounts: readonly string[], destinations: readonly string[], limit: number): Promise<EffectDoc[]> {
  const filter: mongoose.QueryFilter<EffectDoc> = { state: "pending", due_at: mongoose.trusted({ $lte: now }), kind: mongoose.trusted({ $in: [...opts.kindNames] }) };
  if (accounts.length > 0) filter.user_id = mongoose.trusted({ $nin: accounts.map((a) => new mongoose.Types.ObjectId(a)) });
  // $nin also takes effects without a destination.
  if (destinations.length > 0) filter.destination = mongoose.trusted({ $nin: [...destinations] });
  // (state, due_at) index.
  return EffectModel.find(filter).sort({ due_at: 1 }).limit(limit).lean<EffectDoc[]>();
}

/** The end of this process's last lease: each claim's is later, so it tells that claim's effects apart. */
let lastLeaseEnd = 0;

/**
 * Leases the effects read as due that still are and have not changed since (another replica may have taken one
 * since), in one write, and reads back which this claim got; each as it was before (`picked`, read just now).
 */
async function leaseAll(opts: ClaimOptions, now: Date, picked: readonly EffectDoc[]): Promise<Array<{ doc: EffectDoc; before: EffectDoc }>> {
  // From the write, not from the claim's start: the read before it may have waited seconds for a connection, and a
  // lease counted from then could run out before the first renewal (another replica would then send it too).
  const at = opts.clock.nowMs();
  lastLeaseEnd = Math.max(at + opts.leaseMs, lastLeaseEnd + 1);
  const leaseEnd = new Date(lastLeaseEnd);
  // The lease is due_at itself: when it runs out unrenewed, the effect is due again.
  const set = { due_at: leaseEnd, lease_owner: opts.owner, lease_until: leaseEnd, updated_at: new Date(at) };
  const effects = outboxWorkDb().collection<EffectDoc>("effects");
  // One updateMany, not one findOneAndUpdate per effect (src/outbox/batch.ts). Unchanged since the read: the same
  // tries started and the same holder, so what was read is what it was before this lease (earlierTries reads it).
  const unchanged = picked.map((p) => ({ _id: p._id, attempts: p.attempts, lease_owner: p.lease_owner }));
  // _id index.
  await effects.updateMany({ state: "pending", due_at: { $lte: now }, $or: unchanged }, { $set: set, $inc: { attempts: 1 } });
  // This claim's lease end is this process's alone: exactly the effects this write leased.
  const got = new Set((await effects.find({ _id: { $in: picked.map((p) => p._id) }, lease_owner: opts.owner, lease_until: leaseEnd }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
  return picked.filter((p) => got.has(p._id)).map((before) => ({ doc: { ...before, ...set, attempts: before.attempts + 1 }, before }));
}

/**
 * Claims up to `free` due effects by the fairness rules (src/outbox/share.ts): first the oldest due effect of each
 * account with nothing running here, then the oldest of any account under its share; never a second of one
 * destination. One read finds them (two when some account is busy), one write leases them all and one read tells
 * which it got, one read finds their earlier tries. The claimed effects count as running in `work`.
 */
export async function claimDue(opts: ClaimOptions, work: Workload, free: number): Promise<Claimed[]> {
  if (free <= 0) return [];
  const now = opts.clock.now();
  const picked: EffectDoc[] = [];
  const take = (candidates: readonly EffectDoc[], onePerAccount: boolean) => {
    const accounts = new Set<string>();
    for (const c of candidates) {
      const place = placeOf(c);
      if (picked.length >= free || picked.some((p) => p._id === c._id) || !work.admits(place) || resting(c)) continue;
      if (onePerAccount && accounts.has(place.account)) continue;
      accounts.add(place.account);
      work.begin(place);
      picked.push(c);
    }
  };
  // An untried effect of a destination that just failed here: it waits for the rest, like those planned after it.
  const resting = (c: EffectDoc) => c.attempts === 0 && c.destination !== null && (opts.troubles.restingUntil(c.destination) ?? 0) > now.getTime();
  const busy = work.busyAccounts();
  // Twice the slots: a candidate may be refused here (a second of one destination, an account reaching its share).
  const idleFirst = await due(opts, now, busy, work.busyDestinations(), free * 2);
  take(idleFirst, true);
  if (picked.length < free && (busy.length > 0 || idleFirst.length > 0)) take(await due(opts, now, work.fullAccounts(), work.busyDestinations(), free * 2), false);
  if (picked.length === 0) return [];
  let leased: Array<{ doc: EffectDoc; before: EffectDoc }>;
  let tries: Awaited<ReturnType<typeof triesOf>>;
  try {
    leased = await leaseAll(opts, now, picked);
    tries = await triesOf(leased.map((l) => l.doc._id));
  } catch (err) {
    // Those leased are left to their lease, which runs out: nothing ran.
    for (const p of picked) work.end(placeOf(p));
    throw err;
  }
  const got = new Set(leased.map((l) => l.doc._id));
  for (const p of picked) if (!got.has(p._id)) work.end(placeOf(p));
  return leased.map((l) => ({ ...l, tries: tries.get(l.doc._id) ?? [] }));
}
