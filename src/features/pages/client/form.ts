// The event page's booking form in the browser: reading its answers, checking each field in the host's words, and marking the wrong ones.
import type { EventPageData } from "../shared/data.js";
import { say, type Slot } from "../shared/view.js";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Puts `text` in a message line (empty hides it). */
export function showAlert(el: HTMLElement, text: string): void {
  el.textContent = text;
  el.hidden = text === "";
}

type AnswerValue = string | number | boolean | string[];

/** Marks a field (by its name) wrong with `text`, or clears it with "". */
export function setFieldError(form: HTMLFormElement, name: string, text: string): void {
  const holder = document.getElementById(`err-${name}`);
  if (holder) showAlert(holder, text);
  for (const control of Array.from(form.querySelectorAll<HTMLElement>(`[name="${CSS.escape(name)}"]`))) {
    if (text) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
  }
}

function questionValue(form: HTMLFormElement, id: string, type: string): AnswerValue | undefined {
  const name = `question_${id}`;
  const controls = Array.from(form.querySelectorAll<HTMLInputElement>(`[name="${CSS.escape(name)}"]`));
  if (type === "check_box") {
    const picked = controls.filter((c) => c.checked).map((c) => c.value);
    return picked.length > 0 ? picked : undefined;
  }
  if (type === "radio_button" || type === "boolean" || type === "rating") {
    const picked = controls.find((c) => c.checked)?.value;
    if (picked === undefined) return undefined;
    if (type === "boolean") return picked === "true";
    if (type === "rating") return Number(picked);
    return picked;
  }
  const raw = (controls[0]?.value ?? "").trim();
  if (raw === "") return undefined;
  if (type === "number") {
    const n = Number(raw);
    return Number.isFinite(n) ? n : raw;
  }
  return raw;
}

function guestList(raw: string): string[] {
  return raw
    .split(/[,;\s]+/)
    .map((g) => g.trim())
    .filter((g) => g !== "");
}

function textOf(form: HTMLFormElement, name: string): string {
  return (form.elements.namedItem(name) as HTMLInputElement).value;
}

/** What is wrong with one field, in the host's words, or "" (the API checks again). */
function problemOf(form: HTMLFormElement, data: EventPageData, name: string): string {
  const s = data.speech;
  if (name === "attendee_name") return textOf(form, name).trim() === "" ? say(s, "errorName") : "";
  if (name === "attendee_email") return EMAIL.test(textOf(form, name).trim()) ? "" : say(s, "errorEmail");
  if (name === "guest_emails") {
    if (!data.guests.enabled) return "";
    const guests = guestList(textOf(form, name));
    if (guests.some((g) => !EMAIL.test(g))) return say(s, "errorGuestEmail");
    return guests.length > data.guests.limit ? say(s, "errorTooManyGuests", { limit: String(data.guests.limit) }) : "";
  }
  const q = data.questions.find((x) => `question_${x.id}` === name);
  if (!q || q.type === "hidden") return "";
  const value = questionValue(form, q.id, q.type);
  if (value === undefined && q.required) return say(s, "errorRequired");
  if (q.type === "email" && typeof value === "string" && !EMAIL.test(value)) return say(s, "errorEmail");
  return "";
}

function fieldNames(data: EventPageData): string[] {
  return [
    "attendee_name",
    "attendee_email",
    ...(data.guests.enabled ? ["guest_emails"] : []),
    ...data.questions.filter((q) => q.type !== "hidden").map((q) => `question_${q.id}`),
  ];
}

/** The whole form checked, each field marked or cleared. Returns the fields in error. */
export function checkForm(form: HTMLFormElement, data: EventPageData): string[] {
  const wrong: string[] = [];
  for (const name of fieldNames(data)) {
    const text = problemOf(form, data, name);
    setFieldError(form, name, text);
    if (text) wrong.push(name);
  }
  return wrong;
}

/**
 * A field marked wrong is checked again as the visitor edits it, so its message goes as soon as it is right
 * (a field never turns red while it is being typed for the first time). The summary (`formAlert`) goes with the last one.
 */
export function recheckAsEdited(form: HTMLFormElement, data: EventPageData, formAlert: HTMLElement): void {
  const recheck = (e: Event) => {
    const name = (e.target as HTMLInputElement).name;
    if (!name || !document.getElementById(`err-${name}`) || form.querySelector(`[name="${CSS.escape(name)}"][aria-invalid="true"]`) === null) return;
    // A message of the API's (an address it refused) goes too: the field is no longer what it refused.
    setFieldError(form, name, problemOf(form, data, name));
    if (form.querySelector('[aria-invalid="true"]') === null) showAlert(formAlert, "");
  };
  form.addEventListener("input", recheck);
  form.addEventListener("change", recheck);
}

export function focusField(form: HTMLFormElement, name: string): void {
  form.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`)?.focus();
}

/** The booking the form asks for (the body of POST …/bookings), at the chosen time in the chosen zone. */
export function bookingOf(form: HTMLFormElement, data: EventPageData, chosen: { slot: Slot; zone: string }): Record<string, unknown> {
  const answers = data.questions.flatMap((q) => {
    const value = questionValue(form, q.id, q.type);
    return value === undefined ? [] : [{ question_id: q.id, value }];
  });
  return {
    start_time: chosen.slot.start_time,
    attendee_name: textOf(form, "attendee_name").trim(),
    attendee_email: textOf(form, "attendee_email").trim(),
    timezone: chosen.zone,
    // The language of this page: the booker's e-mails are written in it.
    locale: data.speech.locale,
    ...(data.picker.duration === undefined ? {} : { duration_minutes: data.picker.duration }),
    answers,
    ...(data.guests.enabled ? { guest_emails: guestList(textOf(form, "guest_emails")) } : {}),
  };
}
