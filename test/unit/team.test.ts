// The pure team event rules (teams.md): hosts checked against the accepted members, and round robin's order — priority, weighted share of the month, least recently booked.
import { describe, expect, it } from "vitest";
import { checkHosts, checkScheduling, HOSTS_NOT_MEMBERS, roundRobinOrder, TEAM_SCHEDULINGS, type Candidate } from "../../src/domain/team.js";

const members = new Set(["a", "b", "c"]);

/** Books `n` meetings in a row with every host free, as round robin picks; returns each host's count. */
function distribute(hosts: { userId: string; weight: number; priority?: number }[], n: number): Record<string, number> {
  const count: Record<string, number> = Object.fromEntries(hosts.map((h) => [h.userId, 0]));
  const last: Record<string, number> = {};
  const weights = hosts.reduce((s, h) => s + h.weight, 0);
  for (let i = 0; i < n; i++) {
    const free: Candidate[] = hosts.map((h) => ({ userId: h.userId, priority: h.priority ?? 2, weight: h.weight, monthBookings: count[h.userId], lastBookedAt: last[h.userId] ?? -Infinity }));
    const [first] = roundRobinOrder(free, { weights, bookings: i });
    count[first.userId]++;
    last[first.userId] = i;
  }
  return count;
}

describe("team event rules", () => {
  it("hosts: accepted members only, once each, priority 0-4 (2) and weight 1-1000 (100)", () => {
    expect(checkHosts([{ userId: "a" }, { userId: "b", priority: 4, weight: 1000 }], members)).toEqual([
      { userId: "a", priority: 2, weight: 100 },
      { userId: "b", priority: 4, weight: 1000 },
    ]);
    expect(() => checkHosts([{ userId: "z" }], members)).toThrow(HOSTS_NOT_MEMBERS);
    expect(() => checkHosts([], members)).toThrow("hosts must name at least one member");
    expect(() => checkHosts([{ userId: "a" }, { userId: "a" }], members)).toThrow("hosts must not name a member twice");
    expect(() => checkHosts([{ userId: "a", priority: 5 }], members)).toThrow("hosts[0].priority must be a whole number from 0 to 4");
    expect(() => checkHosts([{ userId: "a", weight: 1001 }], members)).toThrow("hosts[0].weight must be a whole number from 1 to 1000");
    expect(() => checkHosts(Array.from({ length: 51 }, (_, i) => ({ userId: `m${i}` })), new Set(Array.from({ length: 51 }, (_, i) => `m${i}`)))).toThrow("hosts may name at most 50 members");
    expect(TEAM_SCHEDULINGS.map(checkScheduling)).toEqual(["round_robin", "collective"]);
    expect(() => checkScheduling("random")).toThrow("scheduling is not included in the list");
  });

  it("the highest priority free host first, whatever the shares", () => {
    const order = roundRobinOrder(
      [
        { userId: "a", priority: 2, weight: 100, monthBookings: 0, lastBookedAt: -Infinity },
        { userId: "b", priority: 3, weight: 100, monthBookings: 9, lastBookedAt: 5 },
      ],
      { weights: 200, bookings: 9 },
    );
    expect(order.map((p) => p.userId)).toEqual(["b", "a"]);
    expect(order[0].reason).toBe("priority 3, 9 of 9 bookings this month");
  });

  it("among equals, the one furthest below their share, then the least recently booked", () => {
    const free = (aBookings: number, aLast: number, bLast: number): Candidate[] => [
      { userId: "a", priority: 2, weight: 100, monthBookings: aBookings, lastBookedAt: aLast },
      { userId: "b", priority: 2, weight: 100, monthBookings: 2, lastBookedAt: bLast },
    ];
    expect(roundRobinOrder(free(1, 0, 1), { weights: 200, bookings: 3 })[0].userId).toBe("a");
    // Equal shares: the one booked longest ago.
    expect(roundRobinOrder(free(2, 9, 3), { weights: 200, bookings: 4 })[0].userId).toBe("b");
  });

  it("300 bookings end 100 each with equal weights, and within 2 % of 150/75/75 with 200/100/100", () => {
    expect(distribute([{ userId: "a", weight: 100 }, { userId: "b", weight: 100 }, { userId: "c", weight: 100 }], 300)).toEqual({ a: 100, b: 100, c: 100 });
    const weighted = distribute([{ userId: "a", weight: 200 }, { userId: "b", weight: 100 }, { userId: "c", weight: 100 }], 300);
    expect(Math.abs(weighted.a - 150)).toBeLessThanOrEqual(3);
    expect(Math.abs(weighted.b - 75)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(weighted.c - 75)).toBeLessThanOrEqual(1.5);
  });
});
