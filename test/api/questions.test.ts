// Booking-form questions over every protocol: types, options, states, events_count, and event_questions_attributes on events.
import { describe, expect, it, beforeAll } from "vitest";
import { QUESTION_TYPES } from "../../src/domain/questions.js";
import { formatLongDate } from "../../src/domain/format.js";
import { baseUrl, newAccount, rest, type Json } from "../helpers/api.js";
import { allowedData, events, expectMissing, expectRefused, invoke, ok, PROTOCOLS, questions, type Protocol } from "../helpers/calls.js";

const CHOICE_TYPES = ["radio_button", "check_box", "drop_down"];
const NOT_FOUND = "question not found";

let seq = 0;
const freshUrl = (): string => `form-${++seq}`;

describe.each(PROTOCOLS)("questions over %s", (protocol: Protocol) => {
  let key: string;
  const createQuestion = (question: Json) => ok(protocol, key, questions.create(question), 201, "question created");
  const updateQuestion = (id: string, question: Json) => ok(protocol, key, questions.update(id, question), 200, "question updated");
  const refusedQuestion = async (question: Json, message: string, data: Json = {}) => expectRefused(protocol, await invoke(protocol, key, questions.create(question)), 422, message, data);
  const createEvent = (event: Json) => ok(protocol, key, events.create(event), 201);
  const updateEvent = (id: string, event: Json) => ok(protocol, key, events.update(id, event), 200);
  const countOf = async (id: string): Promise<number> => (await ok(protocol, key, questions.list())).find((q: Json) => q.id === id).events_count;

  beforeAll(async () => {
    ({ key } = await newAccount());
    await rest("PATCH", "/user", { key, body: { user: { timezone: "Sydney" } } });
  });

  it("creates all fifteen types, active by default, with a display creation date", async () => {
    expect(QUESTION_TYPES).toHaveLength(15);
    for (const questionType of QUESTION_TYPES) {
      const details = CHOICE_TYPES.includes(questionType) ? { options: ["Yes", "No"] } : { placeholder: "..." };
      const before = new Date();
      const q = await createQuestion({ title: `A ${questionType}?`, question_type: questionType, question_details: details });
      expect(q).toMatchObject({ title: `A ${questionType}?`, question_type: questionType, state: "active", question_details: details, events_count: 0 });
      expect(q.id).toMatch(/^[0-9a-f]{24}$/);
      expect([formatLongDate(before, "Australia/Sydney"), formatLongDate(new Date(), "Australia/Sydney")]).toContain(q.created_at);
    }
    await refusedQuestion({ title: "x", question_type: "essay" }, "question_type is not included in the list", allowedData("question_type", QUESTION_TYPES));
  });

  it("needs a non-empty list of distinct option strings on the three choice types", async () => {
    for (const questionType of CHOICE_TYPES) {
      const msg = `question_details.options must be a non-empty list of distinct strings for ${questionType} questions`;
      await refusedQuestion({ title: "Pick", question_type: questionType }, msg);
      await refusedQuestion({ title: "Pick", question_type: questionType, question_details: { options: [] } }, msg);
      await refusedQuestion({ title: "Pick", question_type: questionType, question_details: { options: ["a", "a"] } }, msg);
      await refusedQuestion({ title: "Pick", question_type: questionType, question_details: { options: ["a", 2] } }, msg);
      await refusedQuestion({ title: "Pick", question_type: questionType, question_details: { options: "a, b" } }, msg);
      const q = await createQuestion({ title: "Pick", question_type: questionType, question_details: { options: ["a", "b", "c"] } });
      expect(q.question_details).toEqual({ options: ["a", "b", "c"] });
      expectRefused(protocol, await invoke(protocol, key, questions.update(q.id, { question_details: { options: [] } })), 422, msg);
    }
  });

  it("refuses options on the other types, and keys MongoDB could not store", async () => {
    await refusedQuestion({ title: "Mail", question_type: "email", question_details: { options: ["a"] } },
      "question_details.options is only allowed for radio_button, check_box, drop_down questions");
    await refusedQuestion({ title: "Mail", question_type: "email", question_details: { "a.b": 1 } }, "question_details keys must not start with $ or contain .");
    await refusedQuestion({ title: "Mail", question_type: "email", question_details: { $set: { x: 1 } } }, "question_details keys must not start with $ or contain .");
  });

  it("bounds a rating's scale to 2..10 points and a hidden question's preset to text", async () => {
    expect((await createQuestion({ title: "Stars", question_type: "rating", question_details: { max: 10 } })).question_details).toEqual({ max: 10 });
    for (const max of [1, 11, 4.5, "5"]) {
      await refusedQuestion({ title: "Stars", question_type: "rating", question_details: { max } }, "question_details.max must be a whole number from 2 to 10 for rating questions");
    }
    const q = await createQuestion({ title: "Source", question_type: "hidden", question_details: { value: "newsletter" } });
    await refusedQuestion({ title: "Source", question_type: "hidden", question_details: { value: 7 } }, "question_details.value must be text for hidden questions");
    expectRefused(protocol, await invoke(protocol, key, questions.update(q.id, { question_type: "rating", question_details: { max: 12 } })), 422,
      "question_details.max must be a whole number from 2 to 10 for rating questions");
  });

  it("has the states draft, active and archived", async () => {
    const q = await createQuestion({ title: "Stateful", question_type: "one_line", state: "draft" });
    expect(q.state).toBe("draft");
    expect((await updateQuestion(q.id, { state: "archived" })).state).toBe("archived");
    expect((await updateQuestion(q.id, { state: "active" })).state).toBe("active");
    const states = allowedData("state", ["draft", "active", "archived"]);
    await refusedQuestion({ title: "x", question_type: "one_line", state: "published" }, "state is not included in the list", states);
    expectRefused(protocol, await invoke(protocol, key, questions.update(q.id, { state: "deleted" })), 422, "state is not included in the list", states);
  });

  it("checks the title: blank 422, 250 characters fine, 251 refused, absent 400", async () => {
    await refusedQuestion({ title: "", question_type: "one_line" }, "title can't be blank");
    await refusedQuestion({ title: "   ", question_type: "one_line" }, "title can't be blank");
    expect((await createQuestion({ title: "t".repeat(250), question_type: "one_line" })).title).toBe("t".repeat(250));
    await refusedQuestion({ title: "t".repeat(251), question_type: "one_line" }, "title is too long (maximum is 250 characters)");
    expectMissing(protocol, await invoke(protocol, key, questions.create({ question_type: "one_line" })), { question: ["title"] });
    expectMissing(protocol, await invoke(protocol, key, questions.create({ title: "x" })), { question: ["question_type"] });
    expectMissing(protocol, await invoke(protocol, key, questions.create()), { question: ["title", "question_type"] });
  });

  it("updates only the sent fields, and re-checks details when the type changes", async () => {
    const q = await createQuestion({ title: "Before", question_type: "drop_down", question_details: { options: ["a", "b"] } });
    const renamed = await updateQuestion(q.id, { title: "After" });
    expect(renamed).toMatchObject({ title: "After", question_type: "drop_down", state: "active", question_details: { options: ["a", "b"] } });
    expect((await updateQuestion(q.id, { question_details: { options: ["x"] } })).question_details).toEqual({ options: ["x"] });
    expectRefused(protocol, await invoke(protocol, key, questions.update(q.id, { question_type: "one_line" })), 422,
      "question_details.options is only allowed for radio_button, check_box, drop_down questions");
    expect(await updateQuestion(q.id, { question_type: "one_line", question_details: {} })).toMatchObject({ question_type: "one_line", question_details: {} });
    expectRefused(protocol, await invoke(protocol, key, questions.update(q.id, { title: "" })), 422, "title can't be blank");
  });

  it("answers 404 for another account's, unknown or malformed question ids", async () => {
    const stranger = await newAccount();
    const q = await createQuestion({ title: "Private", question_type: "one_line" });
    expectRefused(protocol, await invoke(protocol, stranger.key, questions.update(q.id, { title: "Mine now" })), 404, NOT_FOUND);
    for (const id of ["0123456789abcdef01234567", "nope", "1"]) {
      expectRefused(protocol, await invoke(protocol, key, questions.update(id, { title: "x" })), 404, NOT_FOUND);
    }
    expect(await ok(protocol, stranger.key, questions.list())).toEqual([]);
    expect((await ok(protocol, key, questions.list())).find((x: Json) => x.id === q.id).title).toBe("Private");
  });

  it("lists newest first", async () => {
    const own = await newAccount();
    for (const title of ["first", "second", "third"]) await ok(protocol, own.key, questions.create({ title, question_type: "one_line" }), 201);
    expect((await ok(protocol, own.key, questions.list(), 200, "questions found")).map((q: Json) => q.title)).toEqual(["third", "second", "first"]);
  });

  it("puts questions on an event on create, in order_number order, showing only active ones", async () => {
    const a = await createQuestion({ title: "A", question_type: "one_line" });
    const b = await createQuestion({ title: "B", question_type: "email" });
    const c = await createQuestion({ title: "C", question_type: "number" });
    const draft = await createQuestion({ title: "Draft", question_type: "url", state: "draft" });
    const e = await createEvent({
      name: "With form", url: freshUrl(),
      event_questions_attributes: [
        { question_id: a.id, order_number: 2 },
        { question_id: b.id, order_number: 0, required: true },
        { question_id: c.id, order_number: 1 },
        { question_id: draft.id, order_number: 3 },
      ],
    });
    expect(e.active_event_questions.map((x: Json) => [x.question.title, x.order_number, x.required])).toEqual([["B", 0, true], ["C", 1, false], ["A", 2, false]]);
    const entry = e.active_event_questions[0];
    expect(entry.id).toMatch(/^[0-9a-f]{24}$/);
    expect(entry.id).not.toBe(b.id);
    expect(entry.conditions).toEqual([]);
    expect(entry.created_at_ago).toBe("less than a minute ago");
    expect(entry.question).toMatchObject({ id: b.id, title: "B", question_type: "email", state: "active", events_count: 1 });
    // The draft is on the form, just not shown until it is active.
    expect(await countOf(draft.id)).toBe(1);
    await updateQuestion(draft.id, { state: "active" });
    expect((await ok(protocol, key, events.get(e.id))).active_event_questions.map((x: Json) => x.question.title)).toEqual(["B", "C", "A", "Draft"]);
    await updateQuestion(draft.id, { state: "archived" });
    expect((await ok(protocol, key, events.get(e.id))).active_event_questions.map((x: Json) => x.question.title)).toEqual(["B", "C", "A"]);
  });

  it("adds, changes and removes form entries on update; the question itself stays", async () => {
    const a = await createQuestion({ title: "A", question_type: "one_line" });
    const b = await createQuestion({ title: "B", question_type: "one_line" });
    const e = await createEvent({ name: "Form", url: freshUrl(), event_questions_attributes: [{ question_id: a.id }] });
    const entryA = e.active_event_questions[0];
    expect(entryA.order_number).toBe(0);

    const added = await updateEvent(e.id, { event_questions_attributes: [{ question_id: b.id, required: true }] });
    expect(added.active_event_questions.map((x: Json) => [x.question.title, x.order_number, x.required])).toEqual([["A", 0, false], ["B", 1, true]]);

    const changed = await updateEvent(e.id, { event_questions_attributes: [{ id: entryA.id, order_number: 5, required: true }] });
    expect(changed.active_event_questions.map((x: Json) => [x.question.title, x.order_number, x.required])).toEqual([["B", 1, true], ["A", 5, true]]);
    expect(changed.active_event_questions.find((x: Json) => x.question.id === a.id).id).toBe(entryA.id);

    const removed = await updateEvent(e.id, { event_questions_attributes: [{ id: entryA.id, _destroy: true }] });
    expect(removed.active_event_questions.map((x: Json) => x.question.title)).toEqual(["B"]);
    const listed = await ok(protocol, key, questions.list());
    expect(listed.find((q: Json) => q.id === a.id)).toMatchObject({ title: "A", events_count: 0 });

    // Adding a question that is already on the form changes its entry instead of doubling it.
    const again = await updateEvent(e.id, { event_questions_attributes: [{ question_id: b.id, required: false }] });
    expect(again.active_event_questions.map((x: Json) => [x.question.title, x.required])).toEqual([["B", false]]);
  });

  it("ignores another account's question, entry ids of other events and malformed ids, while the rest applies", async () => {
    const stranger = await newAccount();
    const foreign = await ok(protocol, stranger.key, questions.create({ title: "Foreign", question_type: "one_line" }), 201);
    const mine = await createQuestion({ title: "Mine", question_type: "one_line" });
    const other = await createEvent({ name: "Other", url: freshUrl(), event_questions_attributes: [{ question_id: mine.id, required: true }] });
    const otherEntry = other.active_event_questions[0];
    const e = await createEvent({ name: "Target", url: freshUrl(), event_questions_attributes: [{ question_id: foreign.id }] });
    expect(e.active_event_questions).toEqual([]);

    const updated = await updateEvent(e.id, {
      name: "Target renamed",
      event_questions_attributes: [
        { question_id: foreign.id, required: true },
        { id: otherEntry.id, _destroy: true },
        { id: otherEntry.id, required: false },
        { id: "not-an-id", required: true },
        { question_id: "not-an-id" },
        { question_id: mine.id, order_number: 4 },
      ],
    });
    expect(updated.name).toBe("Target renamed");
    expect(updated.active_event_questions.map((x: Json) => [x.question.title, x.order_number])).toEqual([["Mine", 4]]);
    const otherNow = await ok(protocol, key, events.get(other.id));
    expect(otherNow.active_event_questions.map((x: Json) => [x.id, x.required])).toEqual([[otherEntry.id, true]]);
    expect((await ok(protocol, stranger.key, questions.list()))[0].events_count).toBe(0);
    expectRefused(protocol, await invoke(protocol, key, events.update(e.id, { event_questions_attributes: [{ question_id: mine.id, order_number: -1 }] })), 422,
      "event_questions_attributes.order_number must be 0 or greater");
  });

  it("orders entries with the same order_number by age", async () => {
    const older = await createQuestion({ title: "Older", question_type: "one_line" });
    const newer = await createQuestion({ title: "Newer", question_type: "one_line" });
    const e = await createEvent({ name: "Ties", url: freshUrl(), event_questions_attributes: [{ question_id: older.id, order_number: 1 }] });
    await new Promise((r) => setTimeout(r, 5));
    const updated = await updateEvent(e.id, { event_questions_attributes: [{ question_id: newer.id, order_number: 1 }] });
    expect(updated.active_event_questions.map((x: Json) => x.question.title)).toEqual(["Older", "Newer"]);
  });

  it("counts undeleted events in events_count through clone, delete and removal", async () => {
    const q = await createQuestion({ title: "Counted", question_type: "one_line" });
    const first = await createEvent({ name: "One", url: freshUrl(), event_questions_attributes: [{ question_id: q.id, required: true, order_number: 7 }] });
    const second = await createEvent({ name: "Two", url: freshUrl(), event_questions_attributes: [{ question_id: q.id }] });
    expect(await countOf(q.id)).toBe(2);
    expect(second.active_event_questions[0].question.events_count).toBe(2);

    const copy = await ok(protocol, key, events.clone(first.id), 201);
    expect(copy.active_event_questions.map((x: Json) => [x.question.id, x.required, x.order_number])).toEqual([[q.id, true, 7]]);
    expect(copy.active_event_questions[0].id).not.toBe(first.active_event_questions[0].id);
    expect(copy.active_event_questions[0].question.events_count).toBe(3);

    await ok(protocol, key, events.remove(second.id));
    expect(await countOf(q.id)).toBe(2);
    await updateEvent(copy.id, { event_questions_attributes: [{ id: copy.active_event_questions[0].id, _destroy: true }] });
    expect(await countOf(q.id)).toBe(1);
    // The original keeps its entry: the copy's links are its own.
    expect((await ok(protocol, key, events.get(first.id))).active_event_questions.map((x: Json) => x.question.id)).toEqual([q.id]);
  });
});

describe("REST-only shapes of questions", () => {
  it("answers the envelope for missing params and 404s", async () => {
    const { key } = await newAccount();
    const missing = await rest("POST", "/questions", { key, body: { question: { title: "x" } } });
    expect(missing.body).toEqual({ success: false, message: "missing params", data: { question: ["question_type"] }, status: "bad_request" });
    const unknown = await rest("PATCH", "/questions/0123456789abcdef01234567", { key, body: { question: { title: "x" } } });
    expect(unknown.body).toEqual({ success: false, message: NOT_FOUND, data: {}, status: "not_found" });
    const noKey = await rest("GET", "/questions");
    expect([noKey.status, noKey.body.message]).toEqual([401, "api_key is missing"]);
  });

  it("names the removal flag `_destroy` as scheduling-api.md does (the proto field is `destroy`): read, checked, refused by that name, and documented", async () => {
    const { key } = await newAccount();
    const q = (await rest("POST", "/questions", { key, body: { question: { title: "Flag", question_type: "one_line" } } })).body.data;
    const e = (await rest("POST", "/events", { key, body: { event: { name: "Flagged", url: freshUrl(), event_questions_attributes: [{ question_id: q.id }] } } })).body.data;
    const entry = e.active_event_questions[0].id;
    const patch = (attributes: Json) => rest("PATCH", `/events/${e.id}`, { key, body: { event: { event_questions_attributes: [attributes] } } });
    const wrongType = await patch({ id: entry, _destroy: "yes" });
    expect([wrongType.status, wrongType.body.message]).toEqual([422, "_destroy is not valid"]);
    const misspelt = await patch({ id: entry, _destroyy: true });
    expect([misspelt.status, misspelt.body.message]).toEqual([422, "unknown field event_questions_attributes._destroyy (did you mean event_questions_attributes._destroy?)"]);
    expect(misspelt.body.data.allowed).toEqual(expect.arrayContaining(["event_questions_attributes._destroy"]));
    expect(misspelt.body.data.allowed).not.toContain("event_questions_attributes.destroy");
    const removed = await patch({ id: entry, _destroy: true });
    expect([removed.status, removed.body.data.active_event_questions]).toEqual([200, []]);
    const openapi = (await fetch(`${baseUrl()}/api/v1/openapi.json`).then((r) => r.json())) as Json;
    const attributes = Object.entries(openapi.components.schemas as Record<string, Json>).filter(([name]) => name.startsWith("EventQuestionAttributes"));
    expect(attributes.map(([, schema]) => Object.keys(schema.properties))).toEqual([["id", "question_id", "required", "order_number", "_destroy"]]);
  });
});
