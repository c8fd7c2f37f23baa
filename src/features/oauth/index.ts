// What the app uses of OAuth: the service, its REST rows, the callback route, and the shape purposes make connections from.
export { createOAuthService } from "./service.js";
export { oauthRoutes } from "./routes.js";
export { oauthCallback, type AuthorizedAccount, type PurposeHandlers } from "./callback.js";
