// Claiming the next due effect for this replica: the oldest first, idle accounts before busy ones, within each account's share and one per destination, leased in one write.
import mongoose from "mongoose";
import { EffectModel, type EffectDoc } from "../db/models/effect.js";
import type { Placed, Workload } from "./share.js";

/** An effect this replica just leased, and as it was before (who held it, how many tries it had). */
export interface Claimed {
  doc: EffectDoc;
  before: EffectDoc;
}

export interface ClaimOptions {
  /** This replica's name on its leases. */
  owner: string;
  leaseMs: number;
  /** The kinds this replica runs. */
  kindNames: readonly string[];
}

export const placeOf = (doc: Pick<EffectDoc, "user_id" | "destination">): Placed => ({ account: doc.user_id.toHexString(), destination: doc.destination });

/** The oldest due effect, leaving out the accounts and destinations given; leased to this replica. */
async function claimExcept(opts: ClaimOptions, accounts: readonly string[], destinations: readonly string[]): Promise<Claimed | null> {
  const now = new Date();
  const leaseEnd = new Date(now.getTime() + opts.leaseMs);
  const filter: mongoose.QueryFilter<EffectDoc> = { state: "pending", due_at: mongoose.trusted({ $lte: now }), kind: mongoose.trusted({ $in: [...opts.kindNames] }) };
  if (accounts.length > 0) filter.user_id = mongoose.trusted({ $nin: accounts.map((a) => new mongoose.Types.ObjectId(a)) });
  // $nin also takes effects without a destination.
  if (destinations.length > 0) filter.destination = mongoose.trusted({ $nin: [...destinations] });
  // (state, due_at) index. The lease is due_at itself: when it runs out unrenewed, the effect is due again.
  const lease = { due_at: leaseEnd, lease_owner: opts.owner, lease_until: leaseEnd, updated_at: now };
  // As it was before: whether another replica held it (and never finished) is read from there.
  const before = await EffectModel.findOneAndUpdate(filter, { $set: lease, $inc: { attempts: 1 } }, { sort: { due_at: 1 }, returnDocument: "before" }).lean<EffectDoc>();
  return before && { doc: { ...before, ...lease, attempts: before.attempts + 1 }, before };
}

/** The next effect to run here, by the fairness rules (src/outbox/share.ts). */
export async function claimNext(opts: ClaimOptions, work: Workload): Promise<Claimed | null> {
  const busyDestinations = work.busyDestinations();
  const running = work.busyAccounts();
  if (running.length > 0) {
    const idleAccountsFirst = await claimExcept(opts, running, busyDestinations);
    if (idleAccountsFirst) return idleAccountsFirst;
  }
  return claimExcept(opts, work.fullAccounts(), busyDestinations);
}
