// What other features use of accounts: the caller's account from its API key and the booking limits (Access), picture addresses.
export type { Access, ServiceDeps } from "./context.js";
export { pictureUrl } from "./present.js";
