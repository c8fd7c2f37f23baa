// The settings a host may give (PATCH /user's UserUpdate, and AccountInput at creation: the same names in both) in the domain's snake_case.
import type { UserPatchInput } from "../../domain/user.js";

/** The proto fields both messages share (camelCase, as protobuf-es names them). */
interface SettingsFields {
  fullName?: string;
  url?: string;
  bio?: string;
  designation?: string;
  timezone?: string;
  timeFormat?: string;
  dateFormat?: string;
  locale?: string;
  currency?: string;
  startDayOfWeek?: number;
  eventsLayout?: string;
  showMessageButtonOnProfile?: boolean;
  showMessageButtonOnEvents?: boolean;
  brandColor?: string;
}

export function settingsInput(u: SettingsFields): UserPatchInput {
  return {
    full_name: u.fullName,
    url: u.url,
    bio: u.bio,
    designation: u.designation,
    timezone: u.timezone,
    time_format: u.timeFormat,
    date_format: u.dateFormat,
    locale: u.locale,
    currency: u.currency,
    start_day_of_week: u.startDayOfWeek,
    events_layout: u.eventsLayout,
    show_message_button_on_profile: u.showMessageButtonOnProfile,
    show_message_button_on_events: u.showMessageButtonOnEvents,
    brand_color: u.brandColor,
  };
}
