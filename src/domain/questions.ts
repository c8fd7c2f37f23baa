// Booking-form questions: their types, states and details (options, a rating's scale, a hidden question's preset), checked when written and when answered, for every protocol.
import { blank, invalid, isOneOf, notAllowed, notInList, tooLong } from "./errors.js";
import { charLength, isEmail, normaliseEmail } from "./user.js";

export const QUESTION_TYPES = [
  "one_line",
  "multi_line",
  "radio_button",
  "check_box",
  "drop_down",
  "phone_number",
  "email",
  "number",
  "boolean",
  "url",
  "date",
  "hidden",
  "rating",
  "file_upload",
  "signature",
] as const;
const OPTION_QUESTION_TYPES = ["radio_button", "check_box", "drop_down"] as const;
export const QUESTION_STATES = ["draft", "active", "archived"] as const;
const QUESTION_TITLE_MAX = 250;
const QUESTION_OPTION_MAX = 250;
const QUESTION_DEFAULT_STATE = "active";
const ANSWER_TEXT_MAX = 5000;

/**
 * A rating is a scale from 1 to `question_details.max`: 2 to 10 points (a longer row of radio buttons no longer
 * fits a phone), 5 when not set, as Calendly's and Cal.com's rating fields default.
 */
const RATING_MAX_MIN = 2;
const RATING_MAX_MAX = 10;
const RATING_MAX_DEFAULT = 5;

export type QuestionDetails = { [key: string]: unknown };

export interface QuestionInput {
  title?: string;
  questionType?: string;
  questionDetails?: QuestionDetails;
  state?: string;
}

export interface QuestionFields {
  title: string;
  question_type: string;
  question_details: QuestionDetails;
  state: string;
}

function checkQuestionTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed === "") blank("title");
  if (charLength(trimmed) > QUESTION_TITLE_MAX) tooLong("title", QUESTION_TITLE_MAX);
  return trimmed;
}

// Details are stored as a document: keys MongoDB treats as operators or paths could not be stored or read back.
function storableKeyProblem(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(storableKeyProblem);
  if (typeof value !== "object" || value === null) return false;
  return Object.entries(value).some(([k, v]) => k.startsWith("$") || k.includes(".") || storableKeyProblem(v));
}

function checkOptions(questionType: string, options: unknown): string[] {
  const problem = `question_details.options must be a non-empty list of distinct strings for ${questionType} questions`;
  if (!Array.isArray(options) || options.length === 0) throw invalid(problem);
  const seen = new Set<string>();
  const cleaned: string[] = [];
  for (const option of options) {
    if (typeof option !== "string" || option.trim() === "") throw invalid(problem);
    const text = option.trim();
    if (charLength(text) > QUESTION_OPTION_MAX) tooLong("question_details.options entry", QUESTION_OPTION_MAX);
    if (seen.has(text)) throw invalid(problem);
    seen.add(text);
    cleaned.push(text);
  }
  return cleaned;
}

function isRatingMax(max: unknown): max is number {
  return typeof max === "number" && Number.isInteger(max) && max >= RATING_MAX_MIN && max <= RATING_MAX_MAX;
}

/**
 * Choice questions need a non-empty list of distinct option strings; other types may not carry options. A rating's
 * `max` is a whole number from 2 to 10; a hidden question's preset (`value`, or `default_value`) is text an answer
 * could hold. Other keys are the host's own and kept as they are.
 */
export function checkQuestionDetails(questionType: string, details: QuestionDetails): QuestionDetails {
  if (storableKeyProblem(details)) throw invalid("question_details keys must not start with $ or contain .", "question_details");
  if (questionType === "rating" && details.max !== undefined && !isRatingMax(details.max)) {
    throw invalid(`question_details.max must be a whole number from ${RATING_MAX_MIN} to ${RATING_MAX_MAX} for rating questions`);
  }
  if (questionType === "hidden") {
    for (const key of ["value", "default_value"] as const) {
      const preset = details[key];
      if (preset === undefined) continue;
      if (typeof preset !== "string") throw invalid(`question_details.${key} must be text for hidden questions`);
      if (charLength(preset) > ANSWER_TEXT_MAX) tooLong(`question_details.${key}`, ANSWER_TEXT_MAX);
    }
  }
  if (!isOneOf(OPTION_QUESTION_TYPES, questionType)) {
    if (details.options !== undefined) throw invalid(`question_details.options is only allowed for ${OPTION_QUESTION_TYPES.join(", ")} questions`);
    return details;
  }
  return { ...details, options: checkOptions(questionType, details.options) };
}

function checkQuestionType(questionType: string): string {
  if (!isOneOf(QUESTION_TYPES, questionType)) notInList("question_type", QUESTION_TYPES, questionType);
  return questionType;
}

function checkQuestionState(state: string): string {
  if (!isOneOf(QUESTION_STATES, state)) notInList("state", QUESTION_STATES, state);
  return state;
}

/** A new question: title and type present (the caller checked), every rule applied, state defaulted. */
export function checkNewQuestion(input: QuestionInput & { title: string; questionType: string }): QuestionFields {
  const title = checkQuestionTitle(input.title);
  const questionType = checkQuestionType(input.questionType);
  return {
    title,
    question_type: questionType,
    question_details: checkQuestionDetails(questionType, input.questionDetails ?? {}),
    state: input.state === undefined ? QUESTION_DEFAULT_STATE : checkQuestionState(input.state),
  };
}

/** The sent fields of an update, checked against the question as it will be (a new type re-checks the details). */
export function checkQuestionUpdate(current: Pick<QuestionFields, "question_type" | "question_details">, input: QuestionInput): Partial<QuestionFields> {
  const out: Partial<QuestionFields> = {};
  if (input.title !== undefined) out.title = checkQuestionTitle(input.title);
  if (input.questionType !== undefined) out.question_type = checkQuestionType(input.questionType);
  if (input.questionDetails !== undefined || out.question_type !== undefined) {
    out.question_details = checkQuestionDetails(out.question_type ?? current.question_type, input.questionDetails ?? current.question_details);
  }
  if (input.state !== undefined) out.state = checkQuestionState(input.state);
  return out;
}

// ---- On the booking form ---------------------------------------------------------------------------------

/** What a question's details mean on the form: the one reading of them the page and the booking rules share. */
export interface QuestionSettings {
  /** The choices of a radio_button, check_box or drop_down question; undefined for other types. */
  options: readonly string[] | undefined;
  /** The top of a rating's scale (its answers are 1..ratingMax). */
  ratingMax: number;
  /** What a hidden question records when the booker gives nothing (the page's link may say otherwise). */
  preset: string | undefined;
}

/**
 * Reads stored details leniently: documents written before a rule existed (a rating's max of 20, a preset that is
 * not text) still make a form, with the default in place of what the rule refuses today.
 */
export function questionSettings(questionType: string, details: unknown): QuestionSettings {
  const d = (typeof details === "object" && details !== null ? details : {}) as QuestionDetails;
  const options = isOneOf(OPTION_QUESTION_TYPES, questionType) && Array.isArray(d.options) ? d.options.filter((o): o is string => typeof o === "string") : undefined;
  const preset = questionType !== "hidden" ? undefined : typeof d.value === "string" ? d.value : typeof d.default_value === "string" ? d.default_value : undefined;
  return { options, ratingMax: isRatingMax(d.max) ? d.max : RATING_MAX_DEFAULT, preset };
}

/** A question of the event's booking form, as the booker must answer it. */
export interface FormQuestion extends QuestionSettings {
  id: string;
  title: string;
  questionType: string;
  required: boolean;
}

export type AnswerValue = string | number | boolean | null | AnswerValue[] | { [k: string]: AnswerValue };

export interface Answer {
  questionId: string;
  value: AnswerValue;
}

function isBlankAnswer(v: AnswerValue): boolean {
  return v === null || (typeof v === "string" && v.trim() === "") || (Array.isArray(v) && v.length === 0);
}

/** The points of a rating's scale, 1..max. */
function ratingPoints(q: FormQuestion): number[] {
  return Array.from({ length: q.ratingMax }, (_, i) => i + 1);
}

function answerProblem(q: FormQuestion, v: AnswerValue): string | undefined {
  const options = q.options ?? [];
  switch (q.questionType) {
    case "radio_button":
    case "drop_down":
      return typeof v === "string" && options.includes(v) ? undefined : "is not one of the options";
    case "check_box":
      return Array.isArray(v) && v.every((x) => typeof x === "string" && options.includes(x)) ? undefined : "must be a list of the options";
    case "boolean":
      return typeof v === "boolean" ? undefined : "must be true or false";
    case "number":
      return typeof v === "number" && Number.isFinite(v) ? undefined : "must be a number";
    case "rating":
      return typeof v === "number" && ratingPoints(q).includes(v) ? undefined : `must be a whole number from 1 to ${q.ratingMax}`;
    case "email":
      return typeof v === "string" && isEmail(normaliseEmail(v)) ? undefined : "is not a valid e-mail";
    default:
      if (typeof v !== "string") return "must be text";
      return charLength(v) > ANSWER_TEXT_MAX ? `is too long (maximum is ${ANSWER_TEXT_MAX} characters)` : undefined;
  }
}

/** The values a refused answer may take, when they are a short list (extensions.md "Allowed values"). */
function allowedAnswers(q: FormQuestion): readonly (string | number)[] | undefined {
  if (q.questionType === "rating") return ratingPoints(q);
  return isOneOf(OPTION_QUESTION_TYPES, q.questionType) ? q.options : undefined;
}

/**
 * Answers to the booking form: each must name a question of the form, at most once, with a value
 * that fits its type; every required question needs a non-blank answer. Blank answers to optional
 * questions are dropped; a hidden question left blank takes its preset, as the page would have sent it.
 */
export function checkAnswers(answers: readonly Answer[], form: readonly FormQuestion[]): Answer[] {
  const byId = new Map(form.map((q) => [q.id, q]));
  const seen = new Set<string>();
  const kept: Answer[] = [];
  answers.forEach((a, i) => {
    const q = byId.get(a.questionId);
    if (!q) throw invalid(`answers[${i}].question_id is not a question of this event's form`);
    if (seen.has(a.questionId)) throw invalid(`answers[${i}].question_id answers the same question twice`, `answers[${i}].question_id`);
    seen.add(a.questionId);
    if (isBlankAnswer(a.value)) return;
    const problem = answerProblem(q, a.value);
    if (problem) {
      const message = `answers[${i}].value ${problem}`;
      const allowed = allowedAnswers(q);
      throw allowed !== undefined ? notAllowed(`answers[${i}].value`, allowed, message, a.value) : invalid(message);
    }
    kept.push(a);
  });
  for (const q of form) {
    if (q.preset !== undefined && q.preset.trim() !== "" && !kept.some((a) => a.questionId === q.id)) kept.push({ questionId: q.id, value: q.preset });
  }
  for (const q of form) {
    if (q.required && !kept.some((a) => a.questionId === q.id)) throw invalid(`answers: "${q.title}" is required`);
  }
  return kept;
}
