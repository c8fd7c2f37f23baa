// The booking pages' script: the event page (pick a time, fill the form, confirm) and the booker's page (cancel, reschedule).
import type { EventPageData, ManagePageData, PageData } from "../shared/data.js";
import { bookingCalendarEntry } from "../../../domain/calendarLinks.js";
import { addToCalendarHtml, esc, meetingZoneLabel, meetingZoneName, cutoffLine, pickerHtml, say, whenLine, type PickerState, type Slot, type Speech } from "../shared/view.js";
import { apiCall, problemField, problemText, takenText, type Answer } from "./api.js";
import { bookingOf, checkForm, focusField, recheckAsEdited, setFieldError, showAlert } from "./form.js";
import { startPicker } from "./picker.js";

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function startEventPage(data: EventPageData): void {
  const s = data.speech;
  const pickerSection = byId("picker");
  const formSection = byId("form-section");
  const confirmation = byId("confirmation");
  const form = byId<HTMLFormElement>("booking-form");
  const formAlert = byId("form-alert");
  const submit = form.querySelector<HTMLButtonElement>("button[type=submit]")!;
  let chosen: { slot: Slot; zone: string } | undefined;

  const picker = startPicker(pickerSection, data.picker, s, (slot, zone) => {
    chosen = { slot, zone };
    const start = new Date(slot.start_time);
    // The zone said once, by its name: the control above says which zone id it is.
    byId("chosen-time").textContent = `${whenLine(start, new Date(slot.end_time), zone, s)} (${meetingZoneName(zone, s.locale, start)})`;
    pickerSection.hidden = true;
    formSection.hidden = false;
    byId("form-heading").focus();
  });

  byId("change-time").addEventListener("click", () => {
    formSection.hidden = true;
    pickerSection.hidden = false;
    picker.focusTimes();
  });

  recheckAsEdited(form, data, formAlert);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void book();
  });

  async function book(): Promise<void> {
    if (!chosen) return;
    showAlert(formAlert, "");
    const wrong = checkForm(form, data);
    if (wrong.length > 0) {
      showAlert(formAlert, say(s, "errorFormSummary"));
      focusField(form, wrong[0]);
      return;
    }
    const booking = bookingOf(form, data, chosen);
    submit.disabled = true;
    submit.textContent = say(s, "submitting");
    const answer = await apiCall("POST", `${data.picker.apiBase}/bookings`, { booking });
    submit.disabled = false;
    submit.textContent = say(s, "submit");
    if (answer.ok) return confirm(answer.data as ConfirmedBooking, chosen.zone);
    if (answer.status === 409) {
      // Taken meanwhile: back to the day's times, read again, with the reason on top.
      formSection.hidden = true;
      pickerSection.hidden = false;
      await picker.reloadDay(takenText(answer, s));
      picker.focusTimes();
      return;
    }
    showRefusal(answer, booking.answers as { question_id: string }[]);
  }

  /** The API's reason for refusing the booking: on its field when it names one, and in the form's message line. */
  function showRefusal(answer: Answer, sent: readonly { question_id: string }[]): void {
    const text = problemText(answer, s, data.guests.limit);
    const field = problemField(answer, sent);
    if (field && field !== "answers") {
      setFieldError(form, field, text);
      focusField(form, field);
    }
    showAlert(formAlert, text);
    if (!field || field === "answers") formAlert.focus();
  }

  function confirm(b: ConfirmedBooking, zone: string): void {
    confirmation.setAttribute("data-private-key", b.private_key);
    confirmation.innerHTML = confirmationHtml(b, zone, data, byId("event-name").textContent ?? "");
    formSection.hidden = true;
    pickerSection.hidden = true;
    confirmation.hidden = false;
    byId("confirmed-heading").focus();
  }
}

interface ConfirmedBooking {
  private_key: string;
  /** `pending` for a request (an event that requires confirmation): no meeting is booked until the host confirms it. */
  status: string;
  attendee_name: string;
  location_kind: string;
  location_name: string;
  start_time: string;
  end_time: string;
  /** Before start_time when the event has a cancel notice. */
  changeable_until?: string | null;
  meeting_url?: string;
  meeting_status?: string;
  guest_emails?: string[];
  /** A team booking's hosts (teams.md): round robin's one chosen, or every host of a collective event. */
  hosts?: { full_name: string }[];
}

/**
 * The confirmation shown once booked: when, where, the add-to-calendar links, the manage link, until when it can
 * change. A request (booking-kinds.md) says it was sent and waits for the host, and offers no calendar entry: there
 * is no meeting yet, and the booking's .ics would only say "canceled".
 */
function confirmationHtml(b: ConfirmedBooking, zone: string, data: EventPageData, eventName: string): string {
  const s = data.speech;
  const requested = b.status === "pending";
  const key = encodeURIComponent(b.private_key);
  // In an iframe the booker's page opens outside it: that page may not be framed.
  const manageTarget = data.embed ? ' target="_blank" rel="noopener"' : "";
  // A team event's page names the team; the booking, who it is with.
  const hosts = b.hosts && b.hosts.length > 0 ? b.hosts.map((h) => h.full_name).join(", ") : undefined;
  const rows = [
    ...(hosts ? [[say(s, "labelHost"), esc(hosts)]] : []),
    [say(s, "labelWhen"), esc(whenLine(new Date(b.start_time), new Date(b.end_time), zone, s))],
    [say(s, "labelTimeZone"), esc(meetingZoneLabel(zone, s.locale, new Date(b.start_time)))],
    b.meeting_url
      ? [say(s, "labelMeetingLink"), `<a href="${esc(b.meeting_url)}" rel="noopener noreferrer" target="_blank">${esc(b.meeting_url)}</a>`]
      : [say(s, "labelLocation"), esc(data.location)],
    // A provider is still making the link (Zoom, Google Meet): it reaches the booker by e-mail.
    ...(!b.meeting_url && b.meeting_status === "pending" ? [[say(s, "labelMeetingLink"), `<span data-meeting="pending">${esc(say(s, "meetingLinkPending"))}</span>`]] : []),
    ...(b.guest_emails && b.guest_emails.length > 0 ? [[say(s, "labelGuests"), esc(b.guest_emails.join(", "))]] : []),
    ...(requested ? [[say(s, "labelStatus"), esc(say(s, "statusPending"))]] : []),
  ];
  const until = b.changeable_until ? new Date(b.changeable_until) : undefined;
  const cutoff = until && until.getTime() < Date.parse(b.start_time) ? `<p class="hint">${cutoffLine("changeUntil", until, zone, s)}</p>` : "";
  const calendar = requested
    ? ""
    : addToCalendarHtml(
        bookingCalendarEntry({
          eventName,
          hostName: data.hostName,
          attendeeName: b.attendee_name,
          start: new Date(b.start_time),
          end: new Date(b.end_time),
          meetingUrl: b.meeting_url,
          locationKind: b.location_kind,
          locationName: b.location_name,
          manageUrl: `${location.origin}/booking/${key}`,
        }),
        `/booking/${key}/invite.ics`,
        s,
      );
  return `<h2 id="confirmed-heading" tabindex="-1">${esc(say(s, requested ? "requestedHeading" : "confirmedHeading"))}</h2>
<p>${esc(say(s, requested ? "requestedText" : "confirmedText", { host: hosts ?? data.hostName }))}</p>
<dl class="facts"><div><dt class="sr-only">${esc(eventName)}</dt><dd class="event-name">${esc(eventName)}</dd></div>${rows.map(([label, value]) => `<div><dt>${esc(label)}</dt><dd>${value}</dd></div>`).join("")}</dl>
${calendar}
<p class="actions"><a class="button" href="/booking/${key}"${manageTarget}>${esc(say(s, "manageLink"))}</a></p>
<p class="hint">${esc(say(s, "manageHint"))}</p>${cutoff}`;
}

function startManagePage(data: ManagePageData): void {
  const s: Speech = data.speech;
  const key = encodeURIComponent(data.privateKey);
  const cancelPanel = document.getElementById("cancel-panel");
  const reschedulePanel = document.getElementById("reschedule-panel");
  if (!cancelPanel || !reschedulePanel || !data.picker) return;
  const pickerData = data.picker;
  const cancelButton = document.querySelector<HTMLButtonElement>('[data-action="cancel"]')!;
  const rescheduleButton = document.querySelector<HTMLButtonElement>('[data-action="reschedule"]')!;
  const confirmMove = document.querySelector<HTMLButtonElement>('[data-action="confirm-reschedule"]')!;
  const moveAlert = byId("reschedule-alert");
  let picked: Slot | undefined;
  let picker: ReturnType<typeof startPicker> | undefined;

  function open(panel: "cancel" | "reschedule" | undefined): void {
    cancelPanel!.hidden = panel !== "cancel";
    reschedulePanel!.hidden = panel !== "reschedule";
    cancelButton.setAttribute("aria-expanded", String(panel === "cancel"));
    rescheduleButton.setAttribute("aria-expanded", String(panel === "reschedule"));
  }

  cancelButton.addEventListener("click", () => {
    open("cancel");
    byId("cancel-heading").focus();
  });
  document.querySelector('[data-action="keep"]')?.addEventListener("click", () => {
    open(undefined);
    cancelButton.focus();
  });
  document.querySelector('[data-action="confirm-cancel"]')?.addEventListener("click", async (e) => {
    const button = e.currentTarget as HTMLButtonElement;
    button.disabled = true;
    const reason = byId<HTMLTextAreaElement>("reason").value.trim();
    const answer = await apiCall("POST", `/public/bookings/${key}/cancel`, { booking: reason === "" ? {} : { reason } });
    button.disabled = false;
    if (answer.ok) location.assign(`/booking/${key}?done=canceled`);
    else showAlert(byId("cancel-alert"), problemText(answer, s));
  });

  rescheduleButton.addEventListener("click", () => {
    open("reschedule");
    if (!picker) {
      const root = byId("reschedule-picker");
      const state: PickerState = { month: pickerData.month, today: pickerData.today, zone: pickerData.zone, days: undefined, day: undefined, startDayOfWeek: pickerData.startDayOfWeek };
      root.innerHTML = pickerHtml(state, s, undefined);
      picker = startPicker(root, pickerData, s, (slot, zone) => {
        picked = slot;
        showAlert(moveAlert, "");
        confirmMove.textContent = say(s, "rescheduleConfirm", { when: `${whenLine(new Date(slot.start_time), new Date(slot.end_time), zone, s)}` });
        confirmMove.hidden = false;
        confirmMove.focus();
      });
    }
    byId("reschedule-heading").focus();
  });

  confirmMove.addEventListener("click", async () => {
    if (!picked) return;
    confirmMove.disabled = true;
    const answer = await apiCall("POST", `/public/bookings/${key}/reschedule`, { booking: { start_time: picked.start_time } });
    confirmMove.disabled = false;
    if (answer.ok) {
      location.assign(`/booking/${encodeURIComponent((answer.data as { private_key: string }).private_key)}?done=rescheduled`);
      return;
    }
    confirmMove.hidden = true;
    picked = undefined;
    if (answer.status === 409 && picker) {
      await picker.reloadDay(takenText(answer, s));
      picker.focusTimes();
    } else showAlert(moveAlert, problemText(answer, s));
  });
}

/**
 * Embedded (?embed=true, in another site's iframe), a page tells that site how tall it is, at once and on every
 * change, so the frame can fit it (no blank area after booking, no inner scrollbar): a `postMessage` of
 * `{type: "scheduling:height", height}` in CSS pixels (docs/pages.md; /assets/embed.js acts on it). Sent to any
 * origin: the height says nothing about the visitor. A listener that arrives late (embed.js is loaded `async`, and
 * may run after this page's first message) asks again with `{type: "scheduling:measure"}`, answered at once.
 */
function reportHeight(): void {
  if (!document.body.classList.contains("embed") || window.parent === window) return;
  let sent = -1;
  const post = () => {
    // The body, not the document: the document is at least as tall as the frame, so it could never shrink.
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === sent) return;
    sent = height;
    window.parent.postMessage({ type: "scheduling:height", height }, "*");
  };
  new ResizeObserver(post).observe(document.body);
  window.addEventListener("message", (e: MessageEvent) => {
    if (e.source !== window.parent || (e.data as { type?: unknown } | null)?.type !== "scheduling:measure") return;
    sent = -1;
    post();
  });
  post();
}

reportHeight();
const holder = document.getElementById("page-data");
if (holder?.textContent) {
  const data = JSON.parse(holder.textContent) as PageData;
  if (data.page === "event") startEventPage(data);
  else startManagePage(data);
}
