// The data a page hands its script (JSON in the page): what it needs to redraw the picker, check the form and confirm.
import type { Speech } from "./view.js";

export interface PickerData {
  /** The public API path of the event's slots and bookings: `/public/users/<user>/events/<event>`, `/public/links/<token>` or `/public/teams/<team>/events/<event>`. */
  apiBase: string;
  /** The zone the server drew the picker in (the host's, or ?timezone=). */
  zone: string;
  month: string;
  today: string;
  startDayOfWeek: number;
  /** Start times of the free slots of `month` as drawn, as runs (startRuns); undefined when not read. */
  startRuns: StartRun[] | undefined;
  /** Length of a slot in ms: with the starts, the slots without repeating every end time. */
  slotMs: number;
  /** The length chosen (minutes) when the event offers several: the slots are read, and the booking made, for it. */
  duration?: number;
  /** A team booking's reschedule: its key, with which the team's slots are those it may move to (teams.md). */
  privateKey?: string;
  /** A seated event's seats left per time as drawn (SeatsLeft). */
  seats?: SeatsLeft;
}

/**
 * The seats left of a month's seated times, compactly: the count most times have (every seat of a time nobody
 * booked yet), and the times that have another.
 */
export interface SeatsLeft {
  usual: number;
  other: [start: string, left: number][];
}

/** The SeatsLeft of `slots`, or undefined when they have no seats. */
export function seatsLeftOf(slots: readonly { start_time: string; seats_left?: number }[]): SeatsLeft | undefined {
  const counts = new Map<number, number>();
  for (const s of slots) if (s.seats_left !== undefined) counts.set(s.seats_left, (counts.get(s.seats_left) ?? 0) + 1);
  if (counts.size === 0) return undefined;
  const usual = [...counts].sort((a, b) => b[1] - a[1])[0][0];
  return { usual, other: slots.filter((s) => s.seats_left !== undefined && s.seats_left !== usual).map((s) => [s.start_time, s.seats_left!]) };
}

/** The seats left of the time starting at `start`, as `seats` holds them. */
export function seatsLeftAt(seats: SeatsLeft | undefined, start: string): number | undefined {
  return seats === undefined ? undefined : (seats.other.find(([at]) => at === start)?.[1] ?? seats.usual);
}

/**
 * Free start times as runs: the first (ISO, as the API writes it), the minutes from one to the next, how many. A
 * month of a host open all day is a few runs instead of 1 500 times, which were most of the event page's bytes.
 */
export type StartRun = [first: string, everyMinutes: number, count: number];

const MINUTE_MS = 60_000;

/** The runs of `starts` (sorted ISO times as toISOString writes them); startsOfRuns gives them back exactly. */
export function startRuns(starts: readonly string[]): StartRun[] {
  const runs: StartRun[] = [];
  for (let i = 0; i < starts.length; ) {
    const first = Date.parse(starts[i]);
    const every = i + 1 < starts.length ? (Date.parse(starts[i + 1]) - first) / MINUTE_MS : 0;
    let count = 1;
    if (Number.isInteger(every) && every > 0) {
      while (i + count < starts.length && starts[i + count] === new Date(first + count * every * MINUTE_MS).toISOString()) count++;
    }
    runs.push([starts[i], count > 1 ? every : 0, count]);
    i += count;
  }
  return runs;
}

/** The start times `runs` hold, in order. */
export function startsOfRuns(runs: readonly StartRun[]): string[] {
  return runs.flatMap(([first, every, count]) => {
    const at = Date.parse(first);
    return Array.from({ length: count }, (_, n) => (n === 0 ? first : new Date(at + n * every * MINUTE_MS).toISOString()));
  });
}

interface FormQuestionData {
  id: string;
  type: string;
  required: boolean;
}

export interface EventPageData {
  page: "event";
  speech: Speech;
  embed: boolean;
  picker: PickerData;
  hostName: string;
  /** The location in the host's words, for the confirmation. */
  location: string;
  guests: { enabled: boolean; limit: number };
  questions: FormQuestionData[];
}

export interface ManagePageData {
  page: "manage";
  speech: Speech;
  privateKey: string;
  /** Undefined when the booking can no longer change. */
  picker: PickerData | undefined;
}

export type PageData = EventPageData | ManagePageData;
