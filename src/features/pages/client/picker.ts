// The time picker in the browser: the zone choice (the browser's by default), months of days with free times, the day's times.
import { systemClock } from "../../../domain/clock.js";
import { addMonths, firstFreeDay, monthHtml, monthRange, slotsByDay, timesHtml, timesStatus, zoneLabel, type PickerState, type Slot, type Speech } from "../shared/view.js";
import { seatsLeftAt, startsOfRuns, type PickerData } from "../shared/data.js";
import { apiCall, problemText } from "./api.js";
import { isIanaTimeZone, utcToWallClock } from "../../../domain/timezones.js";

/** The chosen zone's name as the text under the (transparent) select shows it (shared/view.ts pickerHtml). */
function showChosenZone(select: HTMLSelectElement): void {
  const shown = select.parentElement?.querySelector(".zone-shown");
  if (shown) shown.textContent = select.selectedOptions[0]?.textContent ?? select.value;
}

export interface Picker {
  /** Reads the shown day again (after a time was taken meanwhile) and says `message` over it. */
  reloadDay(message: string): Promise<void>;
  focusTimes(): void;
}

/**
 * The browser's zone when the API takes it (domain/timezones.ts isIanaTimeZone): a system set to `EST5EDT` or `CET`
 * gets the page's own zone instead of slots answered 422 and "Something went wrong".
 */
function browserZone(): string | undefined {
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return isIanaTimeZone(zone) ? zone : undefined;
  } catch {
    return undefined;
  }
}

/** Every zone the browser knows, for the zone control (filled here: the page itself carries only the one it was drawn in). */
function allZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  try {
    return intl.supportedValuesOf ? intl.supportedValuesOf("timeZone") : [];
  } catch {
    return [];
  }
}

/**
 * Fills the zone control with every zone, each named as the server names the one it draws ("Central European Time
 * (Europe/Berlin)"), sorted by that name. A label costs a DateTimeFormat, and the ~420 of them a tenth of a second
 * or more on a phone: they are worked out in idle moments, a slice at a time, and finished at once should the
 * visitor reach for the control first. Until then it holds the zones the page needs (`first`).
 */
function fillZones(select: HTMLSelectElement, s: Speech, first: string[]): void {
  select.addEventListener("change", () => showChosenZone(select));
  const zones = allZones();
  for (const z of first) {
    if (!Array.from(select.options).some((o) => o.value === z)) select.append(new Option(zoneLabel(z, s.locale), z));
    if (zones.length > 0 && !zones.includes(z)) zones.unshift(z);
  }
  if (zones.length === 0) return;
  const labels: string[] = [];
  let done = false;
  const label = () => labels.push(zoneLabel(zones[labels.length], s.locale));
  const finish = () => {
    if (done) return;
    done = true;
    while (labels.length < zones.length) label();
    const chosen = select.value;
    const sorted = zones.map((z, i) => ({ z, text: labels[i] })).sort((a, b) => a.text.localeCompare(b.text, s.locale));
    const fragment = document.createDocumentFragment();
    for (const { z, text } of sorted) fragment.append(new Option(text, z));
    select.replaceChildren(fragment);
    select.value = chosen;
  };
  const idle = (work: (deadline?: { timeRemaining(): number }) => void) =>
    typeof requestIdleCallback === "function" ? requestIdleCallback(work) : setTimeout(work, 50);
  const slice = (deadline?: { timeRemaining(): number }) => {
    if (done) return;
    // Short slices, so none is a long task that holds up a tap.
    const until = performance.now() + Math.min(deadline?.timeRemaining() ?? 10, 15);
    while (labels.length < zones.length && performance.now() < until) label();
    if (labels.length < zones.length) idle(slice);
    else finish();
  };
  select.addEventListener("focus", finish, { once: true });
  select.addEventListener("pointerdown", finish, { once: true });
  idle(slice);
}

/** The picker as the page drew it: the month and, when the page carried them, its free times with the first free day picked. */
function initialState(data: PickerData): PickerState {
  const state: PickerState = {
    month: data.month,
    today: data.today,
    zone: data.zone,
    days: data.startRuns
      ? slotsByDay(
          startsOfRuns(data.startRuns).map((start) => {
            const left = seatsLeftAt(data.seats, start);
            return { start_time: start, end_time: new Date(Date.parse(start) + data.slotMs).toISOString(), ...(left === undefined ? {} : { seats_left: left }) };
          }),
          data.zone,
        )
      : undefined,
    day: undefined,
    startDayOfWeek: data.startDayOfWeek,
  };
  if (state.days) state.day = firstFreeDay(state.days);
  return state;
}

/**
 * While free times are read, the list keeps the room it took, so nothing below it jumps up and back down; the
 * room is given back at the visitor's next click or key (a shift the visitor caused is no surprise). Not on
 * pointerdown: on a page scrolled to its end, the page growing shorter between press and release moved the time
 * under the finger, and the tap on it was lost. Returns what holds the room.
 */
function keepRoom(root: HTMLElement, times: HTMLElement): () => void {
  const releaseRoom = () => {
    times.style.minHeight = "";
  };
  root.addEventListener("click", releaseRoom);
  root.addEventListener("keydown", releaseRoom);
  return () => {
    times.style.minHeight = `${Math.max(times.offsetHeight, parseFloat(times.style.minHeight) || 0)}px`;
  };
}

/**
 * Arrow keys move between the free days (left and right follow the reading direction), Home and End to the
 * first and last; Tab still walks every control.
 */
function arrowKeysBetweenDays(calendar: HTMLElement): void {
  calendar.addEventListener("keydown", (e) => {
    const current = (e.target as HTMLElement).closest<HTMLButtonElement>("button[data-day]");
    if (!current) return;
    const days = Array.from(calendar.querySelectorAll<HTMLButtonElement>("button[data-day]"));
    const at = days.indexOf(current);
    const rtl = getComputedStyle(calendar).direction === "rtl";
    const step: Record<string, number> = { ArrowRight: rtl ? -1 : 1, ArrowLeft: rtl ? 1 : -1, ArrowDown: 7, ArrowUp: -7 };
    let next: HTMLButtonElement | undefined;
    if (e.key === "Home") next = days[0];
    else if (e.key === "End") next = days[days.length - 1];
    else if (step[e.key] !== undefined) {
      // Up and down jump a week, to the nearest free day from there.
      const target = new Date(Date.parse(`${current.dataset.day}T12:00:00Z`) + step[e.key] * 86_400_000).toISOString().slice(0, 10);
      next = Math.abs(step[e.key]) === 1 ? days[at + step[e.key]] : (step[e.key] > 0 ? days.find((d) => d.dataset.day! >= target) : [...days].reverse().find((d) => d.dataset.day! <= target));
    } else return;
    e.preventDefault();
    next?.focus();
  });
}

/** What a click inside the picker can do: pick a day, go to a month, choose a time. */
interface PickerActions {
  state: PickerState;
  draw(): void;
  load(month: string, keepDay: boolean): Promise<void>;
  showAlert(text: string): void;
  onPick(slot: Slot, zone: string): void;
}

function clicksOn(root: HTMLElement, { state, draw, load, showAlert, onPick }: PickerActions): void {
  root.addEventListener("click", (e) => {
    const target = (e.target as HTMLElement).closest("button");
    if (!target || !root.contains(target)) return;
    if (target.dataset.day) {
      state.day = target.dataset.day;
      showAlert("");
      draw();
      // Focus stays on the picked day (redrawn), so keyboard users go on with Tab to its times.
      root.querySelector<HTMLElement>(`[data-day="${state.day}"]`)?.focus();
    } else if (target.dataset.month) {
      showAlert("");
      const goingBack = target.dataset.month < state.month;
      void load(target.dataset.month, false).then(() => root.querySelector<HTMLElement>(`button[data-month="${addMonths(state.month, goingBack ? -1 : 1)}"]`)?.focus());
    } else if (target.dataset.slot) {
      const day = state.day ? state.days?.get(state.day) : undefined;
      const slot = day?.find((x) => x.start_time === target.dataset.slot);
      if (slot) onPick(slot, state.zone);
    }
  });
}

/**
 * Takes over the picker inside `root` (drawn by the server or empty) and calls `onPick` with the slot a visitor
 * chooses. `showAlert` puts a message in the picker's alert line (empty hides it).
 */
export function startPicker(root: HTMLElement, data: PickerData, s: Speech, onPick: (slot: Slot, zone: string) => void): Picker {
  const state = initialState(data);
  const calendar = root.querySelector<HTMLElement>("#calendar")!;
  const times = root.querySelector<HTMLElement>("#times")!;
  const status = root.querySelector<HTMLElement>("#times-status")!;
  const alert = root.querySelector<HTMLElement>("#picker-alert")!;
  const zoneSelect = root.querySelector<HTMLSelectElement>("select[name=timezone]")!;
  let loadSeq = 0;
  const holdRoom = keepRoom(root, times);

  function showAlert(text: string): void {
    alert.textContent = text;
    alert.hidden = text === "";
  }

  function draw(): void {
    calendar.innerHTML = monthHtml(state, s);
    times.innerHTML = timesHtml(state, s);
    status.textContent = timesStatus(state, s);
  }

  /**
   * Shows `month` read again. `orNext`: the month a visitor opens on, so when it has no free time left (late on
   * its last day, or every day left taken) the next month is shown instead, as the server does for its first draw.
   */
  async function load(month: string, keepDay: boolean, orNext = false): Promise<void> {
    const seq = ++loadSeq;
    holdRoom();
    state.month = month;
    state.days = undefined;
    if (!keepDay) state.day = undefined;
    draw();
    const range = monthRange(month, state.today);
    if (!range) {
      if (orNext) return load(addMonths(month, 1), keepDay);
      state.days = new Map();
      draw();
      return;
    }
    const q = new URLSearchParams({ date_from: range.from, date_to: range.to, timezone: state.zone });
    if (data.duration !== undefined) q.set("duration", String(data.duration));
    if (data.privateKey !== undefined) q.set("private_key", data.privateKey);
    const answer = await apiCall("GET", `${data.apiBase}/slots?${q}`);
    if (seq !== loadSeq) return;
    if (!answer.ok) {
      state.days = new Map();
      showAlert(problemText(answer, s));
    } else {
      const slots = (answer.data as { slots: Slot[] }).slots;
      state.days = slotsByDay(slots, state.zone);
      if (orNext && state.days.size === 0) return load(addMonths(month, 1), keepDay);
      if (!state.day || !state.days.has(state.day)) state.day = firstFreeDay(state.days);
    }
    draw();
  }

  /** `opening`: the page's first switch to the browser's zone, which starts from this month as that zone reads it. */
  async function setZone(zone: string, opening = false): Promise<void> {
    state.zone = zone;
    state.today = utcToWallClock(zone, systemClock.now()).date;
    const thisMonth = state.today.slice(0, 7);
    if (opening) return load(thisMonth, false, true);
    await load(state.month < thisMonth ? thisMonth : state.month, false);
  }

  // The zone control: every zone, the browser's chosen when the page was drawn in another.
  const browser = browserZone();
  fillZones(zoneSelect, s, browser ? [state.zone, browser] : [state.zone]);
  zoneSelect.addEventListener("change", () => {
    showAlert("");
    void setZone(zoneSelect.value);
  });

  clicksOn(root, { state, draw, load, showAlert, onPick });
  arrowKeysBetweenDays(calendar);

  if (browser && browser !== state.zone) {
    zoneSelect.value = browser;
    void setZone(browser, true);
  } else {
    zoneSelect.value = state.zone;
    if (state.days === undefined) void load(state.month, false, true);
    else draw();
  }
  showChosenZone(zoneSelect);

  return {
    async reloadDay(message: string) {
      await load(state.month, true);
      showAlert(message);
    },
    focusTimes() {
      (root.querySelector<HTMLElement>("#times-heading") ?? root.querySelector<HTMLElement>("button[data-day]"))?.focus();
    },
  };
}
