// A calendar connection's credentials as a provider uses them: opened CalDAV/feed fields, or the OAuth grant's session (features/oauth access.ts) whose refreshed tokens are sealed back onto the connection.
import { CalendarConnectionModel, type CalendarConnectionDoc } from "../../db/models/calendar.js";
import { unsealWithKeyId } from "../../domain/secretBox.js";
import { calendarProvider, type Credentials, type ProviderAccess } from "../../providers/index.js";
import { grantAccess, type OAuthAccessSettings } from "../oauth/index.js";
import { storeCredentials } from "./writes.js";

/** See CalendarReader.accessOf. */
export function connectionAccess(connection: CalendarConnectionDoc, settings: OAuthAccessSettings): ProviderAccess {
  if (!calendarProvider(connection.provider)?.oauth) return { credentials: JSON.parse(unsealWithKeyId(connection.credentials_sealed, settings.secrets)) as Credentials, oauth: null };
  const id = connection._id;
  return grantAccess(connection, {
    write: (sealed) => storeCredentials(id, sealed),
    // _id index.
    read: async () => (await CalendarConnectionModel.findById(id, { credentials_sealed: 1 }).lean<Pick<CalendarConnectionDoc, "credentials_sealed">>())?.credentials_sealed ?? null,
  }, settings);
}
