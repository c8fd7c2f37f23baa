// What the app and the features that keep OAuth grants use of OAuth: the service, its REST rows, the callback route, the shape purposes make connections from, and the sealed tokens.
export { createOAuthService } from "./service.js";
export { oauthRoutes } from "./routes.js";
export { oauthCallback } from "./route.js";
export type { AuthorizedAccount, Purpose, PurposeHandlers } from "./callback.js";
export { revokeSealedGrant, sealTokens } from "./tokens.js";
export { grantAccess, type OAuthAccessSettings } from "./access.js";
