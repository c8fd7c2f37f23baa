// The data a page hands its script (JSON in the page): what it needs to redraw the picker, check the form and confirm.
import type { Speech } from "./view.js";

export interface PickerData {
  userUrl: string;
  eventUrl: string;
  /** The zone the server drew the picker in (the host's, or ?timezone=). */
  zone: string;
  month: string;
  today: string;
  startDayOfWeek: number;
  /** Start times (ISO, as the API wrote them) of the free slots of `month` as drawn; undefined when not read. */
  starts: string[] | undefined;
  /** Length of a slot in ms: with `starts`, the slots without repeating every end time. */
  slotMs: number;
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
