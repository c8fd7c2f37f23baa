// What other features use of accounts: the caller's account from its API key, the booking limits, picture addresses.
export { authenticate, limitBookingsOf, type ServiceDeps } from "./context.js";
export { pictureCopyUrl, pictureUrl } from "./present.js";
export { PICTURE_WIDTHS, type PictureWidth } from "./picture.js";
