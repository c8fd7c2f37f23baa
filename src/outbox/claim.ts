// Claiming due effects for this replica, several at once: the oldest first, idle accounts before busy ones, within each account's share and one per destination, each leased in one write, with what their earlier tries left read in one go.
import mongoose from "mongoose";
import { EffectModel, type EffectAttemptDoc, type EffectDoc } from "../db/models/effect.js";
import { triesOf } from "./record.js";
import type { Placed, Workload } from "./share.js";

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

/** Leases one effect read as due, if it still is (another replica may have taken it since); as it was before. */
async function lease(opts: ClaimOptions, now: Date, id: string): Promise<{ doc: EffectDoc; before: EffectDoc } | null> {
  // From the write, not from the claim's start: the read before it may have waited seconds for a connection, and a
  // lease counted from then could run out before the first renewal (another replica would then send it too).
  const at = new Date();
  const leaseEnd = new Date(at.getTime() + opts.leaseMs);
  // The lease is due_at itself: when it runs out unrenewed, the effect is due again.
  const set = { due_at: leaseEnd, lease_owner: opts.owner, lease_until: leaseEnd, updated_at: at };
  // _id index. As it was before: whether another replica held it (and never finished) is read from there.
  const before = await EffectModel.findOneAndUpdate({ _id: id, state: "pending", due_at: mongoose.trusted({ $lte: now }) }, { $set: set, $inc: { attempts: 1 } }, { returnDocument: "before" }).lean<EffectDoc>();
  return before && { doc: { ...before, ...set, attempts: before.attempts + 1 }, before };
}

/**
 * Claims up to `free` due effects by the fairness rules (src/outbox/share.ts): first the oldest due effect of each
 * account with nothing running here, then the oldest of any account under its share; never a second of one
 * destination. One read finds them (two when some account is busy), one write each leases it, one read finds their
 * earlier tries: a claim per effect (and two empty ones when nothing was left) made claims most of the outbox's
 * round trips. The claimed effects count as running in `work`.
 */
export async function claimDue(opts: ClaimOptions, work: Workload, free: number): Promise<Claimed[]> {
  if (free <= 0) return [];
  const now = new Date();
  const picked: EffectDoc[] = [];
  const take = (candidates: readonly EffectDoc[], onePerAccount: boolean) => {
    const accounts = new Set<string>();
    for (const c of candidates) {
      const place = placeOf(c);
      if (picked.length >= free || picked.some((p) => p._id === c._id) || !work.admits(place)) continue;
      if (onePerAccount && accounts.has(place.account)) continue;
      accounts.add(place.account);
      work.begin(place);
      picked.push(c);
    }
  };
  const busy = work.busyAccounts();
  // Twice the slots: a candidate may be refused here (a second of one destination, an account reaching its share).
  const idleFirst = await due(opts, now, busy, work.busyDestinations(), free * 2);
  take(idleFirst, true);
  if (picked.length < free && (busy.length > 0 || idleFirst.length > 0)) take(await due(opts, now, work.fullAccounts(), work.busyDestinations(), free * 2), false);
  if (picked.length === 0) return [];
  let leased: Array<{ doc: EffectDoc; before: EffectDoc } | null>;
  let tries: Awaited<ReturnType<typeof triesOf>>;
  try {
    leased = await Promise.all(picked.map((p) => lease(opts, now, p._id)));
    tries = await triesOf(leased.flatMap((l) => (l ? [l.doc._id] : [])));
  } catch (err) {
    // Those leased are left to their lease, which runs out: nothing ran.
    for (const p of picked) work.end(placeOf(p));
    throw err;
  }
  const claimed: Claimed[] = [];
  picked.forEach((p, i) => {
    const l = leased[i];
    if (l) claimed.push({ ...l, tries: tries.get(l.doc._id) ?? [] });
    else work.end(placeOf(p));
  });
  return claimed;
}
