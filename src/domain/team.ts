// Team event rules (teams.md): how it is scheduled, its hosts with priority and weight, and which free host round robin gives a booking to.
import { invalid, notInList } from "./errors.js";

export const TEAM_SCHEDULINGS = ["round_robin", "collective"] as const;
export type TeamScheduling = (typeof TEAM_SCHEDULINGS)[number];

const HOSTS_MAX = 50;
const PRIORITY_MIN = 0;
const PRIORITY_MAX = 4;
const PRIORITY_DEFAULT = 2;
const WEIGHT_MIN = 1;
const WEIGHT_MAX = 1000;
const WEIGHT_DEFAULT = 100;
export const HOSTS_NOT_MEMBERS = "hosts must be accepted members of the team";

export interface HostInput {
  userId: string;
  priority?: number;
  weight?: number;
}

export interface TeamHostRule {
  userId: string;
  priority: number;
  weight: number;
}

export function checkScheduling(value: string): TeamScheduling {
  if (!(TEAM_SCHEDULINGS as readonly string[]).includes(value)) notInList("scheduling", TEAM_SCHEDULINGS, value);
  return value as TeamScheduling;
}

function wholeIn(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(`${field} must be a whole number from ${min} to ${max}`, field);
  return value;
}

/** The hosts as stored: 1 to 50 distinct accepted members (`members`: their user ids), priority and weight in range or their defaults. */
export function checkHosts(hosts: readonly HostInput[], members: ReadonlySet<string>): TeamHostRule[] {
  if (hosts.length === 0) throw invalid("hosts must name at least one member", "hosts");
  if (hosts.length > HOSTS_MAX) throw invalid(`hosts may name at most ${HOSTS_MAX} members`, "hosts");
  const seen = new Set<string>();
  return hosts.map((h, i) => {
    if (!members.has(h.userId)) throw invalid(HOSTS_NOT_MEMBERS, "hosts");
    if (seen.has(h.userId)) throw invalid("hosts must not name a member twice", "hosts");
    seen.add(h.userId);
    return {
      userId: h.userId,
      priority: h.priority === undefined ? PRIORITY_DEFAULT : wholeIn(`hosts[${i}].priority`, h.priority, PRIORITY_MIN, PRIORITY_MAX),
      weight: h.weight === undefined ? WEIGHT_DEFAULT : wholeIn(`hosts[${i}].weight`, h.weight, WEIGHT_MIN, WEIGHT_MAX),
    };
  });
}

/** What round robin knows of one free host when a booking comes. */
export interface Candidate extends TeamHostRule {
  /** The host's confirmed bookings of this event starting in the booking's UTC calendar month. */
  monthBookings: number;
  /** When the host's last booking of this event was made (ms), or -Infinity for none. */
  lastBookedAt: number;
}

export interface HostPick {
  userId: string;
  reason: string;
}

/**
 * The free hosts in the order round robin tries them (teams.md): the highest priority first; among equals, the
 * one furthest below their weighted share of the month's confirmed bookings of the event (`weight` ÷ the sum of
 * all its hosts' weights × those bookings: `month`); then the one whose last booking of the event was made
 * longest ago; then by id, so every replica orders alike. The first is picked; the next are tried when another
 * booking takes it meanwhile.
 */
export function roundRobinOrder(free: readonly Candidate[], month: { weights: number; bookings: number }): HostPick[] {
  const behind = (c: Candidate) => (c.weight / month.weights) * month.bookings - c.monthBookings;
  // Shares are fractions: a difference below this is a tie, not a rounding error deciding.
  const further = (a: Candidate, b: Candidate) => {
    const d = behind(b) - behind(a);
    return Math.abs(d) < 1e-9 ? 0 : d;
  };
  return [...free]
    .sort((a, b) => b.priority - a.priority || further(a, b) || a.lastBookedAt - b.lastBookedAt || a.userId.localeCompare(b.userId))
    .map((c) => ({ userId: c.userId, reason: `priority ${c.priority}, ${c.monthBookings} of ${month.bookings} bookings this month` }));
}

/** Every host a booking holds (teams.md): a team booking's `host_ids`, else its one host, `user_id`. */
export function hostsOf<T>(b: { user_id: T; host_ids?: readonly T[] | null }): T[] {
  return b.host_ids && b.host_ids.length > 0 ? [...b.host_ids] : [b.user_id];
}

/** One host's share of a booking change's messages (teams.md: every host gets what a host gets). */
export interface HostShare {
  hostId: string;
  /** The effect's key: `key` for the first host (as for a personal booking's one host), `key:<host id>` for the others. */
  key: string;
  first: boolean;
}

/** Each of `hosts` (first host first, as hostsOf) with the key its effect of kind `key` goes under. */
export function hostShares(hosts: readonly string[], key: string): HostShare[] {
  return hosts.map((hostId, i) => ({ hostId, key: i === 0 ? key : `${key}:${hostId}`, first: i === 0 }));
}

/**
 * The accounts whose questions a form's links name, each once: a link's `question_owner_id`, or the event's own
 * account (`user_id`) where it names none (a team event's form holds its owner's and admins' questions).
 */
export function questionOwnersOf<T extends { toHexString(): string }>(links: readonly { user_id: T; question_owner_id?: T | null }[]): T[] {
  const ids = new Map<string, T>();
  for (const l of links) {
    const owner = l.question_owner_id ?? l.user_id;
    ids.set(owner.toHexString(), owner);
  }
  return [...ids.values()];
}

/** The roles that manage a team's events and what hangs on them (reminders, single-use links): teams.md "Team events". */
export const TEAM_MANAGERS = ["owner", "admin"] as const;

/** The accepted membership of `userId` among a team's `members`, if any (an open invitation is none). */
export function acceptedMembership<M extends { accepted: boolean; user_id: { equals(other: I): boolean } }, I>(members: readonly M[], userId: I): M | undefined {
  return members.find((m) => m.accepted && m.user_id.equals(userId));
}

/**
 * Every account a team's bookings may be kept under (a booking is kept under its first host): the team's members
 * and every host its events name (a host who left the team still holds what was booked with them), each once.
 */
export function teamBookingHolders<T extends { toHexString(): string }>(members: readonly { user_id: T }[], events: readonly { hosts?: readonly { user_id: T }[] | null }[]): T[] {
  const ids = new Map<string, T>();
  for (const id of [...members.map((m) => m.user_id), ...events.flatMap((e) => (e.hosts ?? []).map((h) => h.user_id))]) ids.set(id.toHexString(), id);
  return [...ids.values()];
}
