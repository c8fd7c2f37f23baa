// What other features use of accounts: the caller's account from its API key and the booking limits (Access), accounts by their e-mail or url, picture and logo addresses, hours on the wire.
export type { Access, ServiceDeps } from "./context.js";
export { pictureCopyUrl, pictureUrl } from "./present.js";
export { LOGO_WIDTHS, PICTURE_WIDTHS } from "./picture.js";
export { hoursInput, hoursMessage } from "./availability.js";
export { accountByUrlKey, accountsByKey } from "./keys.js";
