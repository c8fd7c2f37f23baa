// Booking-form questions without a database: types, states, details (options, rating scale, presets) and the answers they take.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/domain/errors.js";
import { checkAnswers, checkNewQuestion, checkQuestionDetails, checkQuestionUpdate, QUESTION_TYPES, questionSettings, type FormQuestion } from "../../src/domain/questions.js";

/** The 422 a rule throws (fails the test when nothing is thrown). */
function refused(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).httpStatus).toBe(422);
    return err as ApiError;
  }
  throw new Error("expected a 422");
}

const refusal = (fn: () => unknown): string => refused(fn).rawMessage;

describe("questions", () => {
  it("accepts all fifteen types and defaults the state to active", () => {
    expect(QUESTION_TYPES).toHaveLength(15);
    for (const questionType of QUESTION_TYPES) {
      const details = ["radio_button", "check_box", "drop_down"].includes(questionType) ? { options: ["a", "b"] } : {};
      expect(checkNewQuestion({ title: "T", questionType, questionDetails: details })).toEqual({ title: "T", question_type: questionType, question_details: details, state: "active" });
    }
    expect(refusal(() => checkNewQuestion({ title: "T", questionType: "essay" }))).toBe("question_type is not included in the list");
    expect(refusal(() => checkNewQuestion({ title: "T", questionType: "email", state: "published" }))).toBe("state is not included in the list");
  });

  it("limits the title to 250 characters and refuses blanks", () => {
    expect(checkNewQuestion({ title: "t".repeat(250), questionType: "email" }).title).toHaveLength(250);
    expect(refusal(() => checkNewQuestion({ title: "t".repeat(251), questionType: "email" }))).toBe("title is too long (maximum is 250 characters)");
    expect(refusal(() => checkNewQuestion({ title: " ", questionType: "email" }))).toBe("title can't be blank");
  });

  it("needs distinct non-empty options on choice types and no options on the others", () => {
    const msg = "question_details.options must be a non-empty list of distinct strings for check_box questions";
    expect(refusal(() => checkQuestionDetails("check_box", {}))).toBe(msg);
    expect(refusal(() => checkQuestionDetails("check_box", { options: [] }))).toBe(msg);
    expect(refusal(() => checkQuestionDetails("check_box", { options: ["a", " a "] }))).toBe(msg);
    expect(refusal(() => checkQuestionDetails("check_box", { options: ["a", 1] }))).toBe(msg);
    expect(refusal(() => checkQuestionDetails("check_box", { options: "a,b" }))).toBe(msg);
    expect(checkQuestionDetails("check_box", { options: [" a", "b "], layout: "row" })).toEqual({ options: ["a", "b"], layout: "row" });
    expect(refusal(() => checkQuestionDetails("email", { options: ["a"] }))).toBe("question_details.options is only allowed for radio_button, check_box, drop_down questions");
    expect(refusal(() => checkQuestionDetails("email", { nested: [{ $where: "1" }] }))).toBe("question_details keys must not start with $ or contain .");
  });

  it("re-checks the stored details when an update changes the type", () => {
    const current = { question_type: "drop_down", question_details: { options: ["a"] } };
    expect(checkQuestionUpdate(current, { state: "archived" })).toEqual({ state: "archived" });
    expect(refusal(() => checkQuestionUpdate(current, { questionType: "one_line" }))).toBe(
      "question_details.options is only allowed for radio_button, check_box, drop_down questions",
    );
    expect(checkQuestionUpdate(current, { questionType: "radio_button" })).toEqual({ question_type: "radio_button", question_details: { options: ["a"] } });
  });

  it("bounds a rating's scale to 2..10 points and a hidden question's preset to text", () => {
    for (const max of [2, 7, 10]) expect(checkQuestionDetails("rating", { max })).toEqual({ max });
    for (const max of [1, 11, 4.5, "5", null]) {
      expect(refusal(() => checkQuestionDetails("rating", { max })), String(max)).toBe("question_details.max must be a whole number from 2 to 10 for rating questions");
    }
    expect(checkQuestionDetails("number", { max: 1000 })).toEqual({ max: 1000 });
    expect(checkQuestionDetails("hidden", { value: "newsletter" })).toEqual({ value: "newsletter" });
    expect(refusal(() => checkQuestionDetails("hidden", { value: 3 }))).toBe("question_details.value must be text for hidden questions");
    expect(refusal(() => checkQuestionDetails("hidden", { default_value: "x".repeat(5001) }))).toBe("question_details.default_value is too long (maximum is 5000 characters)");
  });
});

describe("questionSettings", () => {
  it("reads what the form shows: options of choices, a rating's top (5 unless a valid max), a hidden question's preset", () => {
    expect(questionSettings("drop_down", { options: ["a", 2, "b"] })).toEqual({ options: ["a", "b"], ratingMax: 5, preset: undefined });
    expect(questionSettings("one_line", { options: ["a"], value: "x" })).toEqual({ options: undefined, ratingMax: 5, preset: undefined });
    expect(questionSettings("rating", { max: 7 }).ratingMax).toBe(7);
    // Stored before the rule: the default rather than a scale the page cannot draw.
    expect(questionSettings("rating", { max: 20 }).ratingMax).toBe(5);
    expect(questionSettings("rating", null).ratingMax).toBe(5);
    expect(questionSettings("hidden", { value: "v", default_value: "d" }).preset).toBe("v");
    expect(questionSettings("hidden", { default_value: "d" }).preset).toBe("d");
  });
});

describe("checkAnswers", () => {
  const question = (id: string, title: string, questionType: string, required: boolean, details: object = {}): FormQuestion => ({
    id,
    title,
    questionType,
    required,
    ...questionSettings(questionType, details),
  });
  const form: FormQuestion[] = [
    question("q1", "Why?", "multi_line", true),
    question("q2", "Size", "drop_down", false, { options: ["S", "M"] }),
    question("q3", "Extras", "check_box", false, { options: ["tea", "cake"] }),
    question("q4", "Guests", "number", false),
  ];

  it("keeps answers that fit and drops blank optional ones", () => {
    expect(checkAnswers([{ questionId: "q1", value: "because" }, { questionId: "q2", value: "" }, { questionId: "q3", value: ["cake"] }, { questionId: "q4", value: 2 }], form)).toEqual([
      { questionId: "q1", value: "because" },
      { questionId: "q3", value: ["cake"] },
      { questionId: "q4", value: 2 },
    ]);
  });

  it("names the question or the answer that is wrong", () => {
    expect(refusal(() => checkAnswers([], form))).toBe('answers: "Why?" is required');
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: [] }], form))).toBe('answers: "Why?" is required');
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: "x" }, { questionId: "q9", value: "x" }], form))).toBe("answers[1].question_id is not a question of this event's form");
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: "x" }, { questionId: "q1", value: "y" }], form))).toBe("answers[1].question_id answers the same question twice");
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: 5 }], form))).toBe("answers[0].value must be text");
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: "x" }, { questionId: "q3", value: ["pie"] }], form))).toBe("answers[1].value must be a list of the options");
    expect(refusal(() => checkAnswers([{ questionId: "q1", value: "x" }, { questionId: "q4", value: "two" }], form))).toBe("answers[1].value must be a number");
  });

  it("takes a rating from 1 to the top of its scale, and lists the points when refusing", () => {
    const rated = [question("r", "How likely?", "rating", false, { max: 3 }), question("s", "Stars", "rating", false)];
    expect(checkAnswers([{ questionId: "r", value: 3 }, { questionId: "s", value: 5 }], rated)).toEqual([{ questionId: "r", value: 3 }, { questionId: "s", value: 5 }]);
    for (const value of [0, 4, 2.5, -1, "2"]) {
      const err = refused(() => checkAnswers([{ questionId: "r", value }], rated));
      expect(err.rawMessage, String(value)).toBe("answers[0].value must be a whole number from 1 to 3");
      expect(err.data).toEqual({ field: "answers[0].value", allowed: [1, 2, 3] });
    }
    expect(refusal(() => checkAnswers([{ questionId: "s", value: 6 }], rated))).toBe("answers[0].value must be a whole number from 1 to 5");
  });

  it("records a hidden question's preset when the booker leaves it blank, and what the booker sent otherwise", () => {
    const tagged = [question("h", "Source", "hidden", true, { value: "newsletter" }), question("d", "Campaign", "hidden", false, { default_value: "spring" })];
    expect(checkAnswers([], tagged)).toEqual([{ questionId: "h", value: "newsletter" }, { questionId: "d", value: "spring" }]);
    expect(checkAnswers([{ questionId: "h", value: "ad" }, { questionId: "d", value: " " }], tagged)).toEqual([{ questionId: "h", value: "ad" }, { questionId: "d", value: "spring" }]);
    expect(refusal(() => checkAnswers([], [question("h", "Source", "hidden", true)]))).toBe('answers: "Source" is required');
  });
});
