// Teams over every protocol (teams.md): a team and its owner, invitations the invited account accepts or declines, roles owner/admin/member (404 for strangers, 403 without the role), member removal, url rules, and team events with their hosts.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../helpers/api.js";
import { allowedData, expectMissing, expectRefused, invoke, ok, PROTOCOLS, type Protocol } from "../helpers/calls.js";
import { teams, teamUrl } from "../helpers/teams.js";
import { newAccount, type Account } from "../helpers/fixtures.js";


/** 403 over REST, PERMISSION_DENIED over RPC. */
function expectForbidden(protocol: Protocol, o: Awaited<ReturnType<typeof invoke>>): void {
  expect(o.ok).toBe(false);
  if (protocol === "rest") expect(o.http).toBe(403);
  else expect(o.code).toBe(Code.PermissionDenied);
}

describe.each(PROTOCOLS)("teams over %s", (protocol: Protocol) => {
  let owner: Account;
  let admin: Account;
  let member: Account;
  let stranger: Account;
  beforeAll(async () => {
    [owner, admin, member, stranger] = await Promise.all([newAccount({ timezone: "Berlin" }), newAccount(), newAccount(), newAccount()]);
  });

  /** A team of `owner` with `admin` and `member` invited and accepted; returns the team and the memberships. */
  async function fullTeam(): Promise<{ team: Json; adminShip: Json; memberShip: Json }> {
    const team = await ok(protocol, owner.key, teams.create({ name: "Sales", url: teamUrl(protocol) }), 201, "team created");
    const adminShip = await ok(protocol, owner.key, teams.invite(team.id, { email: admin.user.email, role: "admin" }), 201, "member invited");
    const memberShip = await ok(protocol, adminShip && owner.key, teams.invite(team.id, { email: member.user.email, role: "member" }), 201);
    await ok(protocol, admin.key, teams.accept(adminShip.id), 200, "invitation accepted");
    await ok(protocol, member.key, teams.accept(memberShip.id), 200);
    return { team, adminShip, memberShip };
  }

  it("creates a team whose caller is its owner, lists, reads, changes and deletes it", async () => {
    const url = teamUrl(protocol);
    const team = await ok(protocol, owner.key, teams.create({ name: " Sales ", url }), 201, "team created");
    expect(team).toMatchObject({ name: "Sales", url, timezone: "Berlin", });
    expect(team.absolute_url).toMatch(new RegExp(`^https?://[^/]+/team/${url}$`));
    expect(team.id).toMatch(/^[0-9a-f]{24}$/);
    expect(Date.parse(team.created_at)).not.toBeNaN();
    expect((await ok(protocol, owner.key, teams.list(), 200, "teams found")).map((t: Json) => t.id)).toContain(team.id);
    expect(await ok(protocol, owner.key, teams.get(team.id), 200, "team found")).toEqual(team);
    const members = await ok(protocol, owner.key, teams.members(team.id), 200, "members found");
    expect(members).toEqual([expect.objectContaining({ user_id: owner.user.id, full_name: owner.user.full_name, email: owner.user.email, role: "owner", accepted: true })]);
    const renamed = await ok(protocol, owner.key, teams.update(team.id, { name: "Sales EU" }), 200, "team updated");
    expect(renamed).toMatchObject({ name: "Sales EU", url });
    const zoned = await ok(protocol, owner.key, teams.create({ name: "Tokyo", url: teamUrl(protocol), timezone: "Asia/Tokyo" }), 201);
    expect(zoned.timezone).toBe("Tokyo");
    await ok(protocol, owner.key, teams.remove(team.id), 200, "team deleted");
    expectRefused(protocol, await invoke(protocol, owner.key, teams.get(team.id)), 404, "team not found");
    // Its url is free again.
    await ok(protocol, owner.key, teams.create({ name: "Again", url }), 201);
  });

  it("keeps a team url unique among teams and to the user url rules", async () => {
    const url = teamUrl(protocol);
    await ok(protocol, owner.key, teams.create({ name: "A", url }), 201);
    expectRefused(protocol, await invoke(protocol, stranger.key, teams.create({ name: "B", url: url.toUpperCase() })), 422, "url has already been taken");
    expectRefused(protocol, await invoke(protocol, owner.key, teams.create({ name: "B", url: "api" })), 422, "url is reserved");
    expectRefused(protocol, await invoke(protocol, owner.key, teams.create({ name: "B", url: "a.b" })), 422, "url must not contain ., ? or #");
    expectMissing(protocol, await invoke(protocol, owner.key, teams.create({ name: "B" })), { team: ["url"] });
  });

  it("an invitation is accepted or declined only by the invited account; roles decide who may change what", async () => {
    const team = await ok(protocol, owner.key, teams.create({ name: "Sales", url: teamUrl(protocol) }), 201);
    const invited = await ok(protocol, owner.key, teams.invite(team.id, { email: member.user.email, role: "member" }), 201, "member invited");
    expect(invited).toMatchObject({ user_id: member.user.id, email: member.user.email, role: "member", accepted: false });
    // Not yet a member: the team is unknown to them, and not listed.
    expectRefused(protocol, await invoke(protocol, member.key, teams.get(team.id)), 404, "team not found");
    expect((await ok(protocol, member.key, teams.list())).map((t: Json) => t.id)).not.toContain(team.id);
    expectRefused(protocol, await invoke(protocol, stranger.key, teams.accept(invited.id)), 404, "invitation not found");
    expect(await ok(protocol, member.key, teams.accept(invited.id), 200, "invitation accepted")).toMatchObject({ id: invited.id, accepted: true });
    expect((await ok(protocol, member.key, teams.get(team.id))).id).toBe(team.id);

    const declined = await ok(protocol, owner.key, teams.invite(team.id, { email: admin.user.email, role: "admin" }), 201);
    expect(await ok(protocol, admin.key, teams.decline(declined.id), 200, "invitation declined")).toMatchObject({ accepted: false });
    expect((await ok(protocol, owner.key, teams.members(team.id))).map((m: Json) => m.user_id).sort()).toEqual([owner.user.id, member.user.id].sort());

    expectRefused(protocol, await invoke(protocol, owner.key, teams.invite(team.id, { email: "nobody-here@example.com" })), 404, "account not found");
    expectRefused(protocol, await invoke(protocol, owner.key, teams.invite(team.id, { email: admin.user.email, role: "owner" })), 422, "role is not included in the list", allowedData("role", ["member", "admin"]));
    // A member may read but not change; a stranger learns nothing.
    expectForbidden(protocol, await invoke(protocol, member.key, teams.invite(team.id, { email: admin.user.email })));
    expectForbidden(protocol, await invoke(protocol, member.key, teams.update(team.id, { name: "Mine" })));
    expectForbidden(protocol, await invoke(protocol, member.key, teams.remove(team.id)));
    for (const call of [teams.get(team.id), teams.members(team.id), teams.update(team.id, { name: "x" }), teams.remove(team.id), teams.invite(team.id, { email: admin.user.email })]) {
      expectRefused(protocol, await invoke(protocol, stranger.key, call), 404, "team not found");
    }
  });

  it("admins manage members; the owner alone deletes; a member may leave; removed members lose the team", async () => {
    const { team, adminShip, memberShip } = await fullTeam();
    // An admin may change the team but not delete it.
    expect((await ok(protocol, admin.key, teams.update(team.id, { name: "Renamed" }))).name).toBe("Renamed");
    expectForbidden(protocol, await invoke(protocol, admin.key, teams.remove(team.id)));
    // A member may leave, and is then a stranger.
    await ok(protocol, member.key, teams.removeMember(team.id, memberShip.id), 200, "member removed");
    expectRefused(protocol, await invoke(protocol, member.key, teams.get(team.id)), 404, "team not found");
    // An admin removes another member; a member removes no one but themselves.
    const again = await ok(protocol, admin.key, teams.invite(team.id, { email: member.user.email }), 201);
    await ok(protocol, member.key, teams.accept(again.id));
    expectForbidden(protocol, await invoke(protocol, member.key, teams.removeMember(team.id, adminShip.id)));
    await ok(protocol, admin.key, teams.removeMember(team.id, again.id), 200, "member removed");
    expect((await ok(protocol, owner.key, teams.members(team.id))).map((m: Json) => m.role).sort()).toEqual(["admin", "owner"]);
  });

  it("team events: the event object with scheduling, hosts and reschedule_with_same_host, hosts only accepted members", async () => {
    const { team } = await fullTeam();
    const pending = await ok(protocol, owner.key, teams.invite(team.id, { email: stranger.user.email }), 201);
    const made = await ok(
      protocol,
      admin.key,
      teams.createEvent(team.id, { name: "Demo", url: "demo", slot_duration: "30_minutes", scheduling: "round_robin", hosts: [{ user_id: owner.user.id, priority: 3, weight: 200 }, { user_id: member.user.id }] }),
      201,
      "event created",
    );
    expect(made).toMatchObject({
      name: "Demo",
      url: "demo",
      absolute_url: `/team/${team.url}/demo`,
      slot_duration: "30 minutes",
      scheduling: "round_robin",
      team_id: team.id,
      reschedule_with_same_host: false,
      hosts: [{ user_id: owner.user.id, priority: 3, weight: 200 }, { user_id: member.user.id, priority: 2, weight: 100 }],
    });
    expect((await ok(protocol, owner.key, teams.listEvents(team.id), 200, "events found")).map((e: Json) => e.id)).toEqual([made.id]);
    expect(await ok(protocol, admin.key, teams.getEvent(team.id, made.id), 200, "event found")).toEqual(made);
    // teams.md: team events are the owner's and admins', reads too; a plain member (a host of it here) gets 403.
    expectForbidden(protocol, await invoke(protocol, member.key, teams.listEvents(team.id)));
    expectForbidden(protocol, await invoke(protocol, member.key, teams.getEvent(team.id, made.id)));
    const changed = await ok(protocol, owner.key, teams.updateEvent(team.id, made.id, { scheduling: "collective", reschedule_with_same_host: true }), 200, "event updated");
    expect(changed).toMatchObject({ scheduling: "collective", reschedule_with_same_host: true, hosts: made.hosts });

    const bad = (hosts: Json) => teams.createEvent(team.id, { name: "X", url: "x", scheduling: "collective", hosts });
    expectRefused(protocol, await invoke(protocol, owner.key, bad([{ user_id: stranger.user.id }])), 422, "hosts must be accepted members of the team");
    expect(pending.accepted).toBe(false);
    expectRefused(protocol, await invoke(protocol, owner.key, bad([{ user_id: owner.user.id, priority: 5 }])), 422, "hosts[0].priority must be a whole number from 0 to 4");
    expectRefused(protocol, await invoke(protocol, owner.key, bad([{ user_id: owner.user.id, weight: 0 }])), 422, "hosts[0].weight must be a whole number from 1 to 1000");
    expectRefused(
      protocol,
      await invoke(protocol, owner.key, teams.createEvent(team.id, { name: "X", url: "x", scheduling: "sometimes", hosts: [{ user_id: owner.user.id }] })),
      422,
      "scheduling is not included in the list",
      allowedData("scheduling", ["round_robin", "collective"]),
    );
    expectMissing(protocol, await invoke(protocol, owner.key, teams.createEvent(team.id, { name: "X", url: "x", hosts: [{ user_id: owner.user.id }] })), { event: ["scheduling"] });
    expectRefused(protocol, await invoke(protocol, owner.key, teams.createEvent(team.id, { name: "Demo", url: "DEMO", scheduling: "collective", hosts: [{ user_id: owner.user.id }] })), 422, "url has already been taken");
    expectForbidden(protocol, await invoke(protocol, member.key, teams.createEvent(team.id, { name: "Mine", url: "mine", scheduling: "collective", hosts: [{ user_id: member.user.id }] })));
    expectRefused(protocol, await invoke(protocol, stranger.key, teams.listEvents(team.id)), 404, "team not found");
    await ok(protocol, owner.key, teams.deleteEvent(team.id, made.id), 200, "event deleted");
    expectRefused(protocol, await invoke(protocol, owner.key, teams.getEvent(team.id, made.id)), 404, "event not found");
  });
});
