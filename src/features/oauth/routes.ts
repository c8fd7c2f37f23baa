// REST rows of OAuthService (providers.md "Connecting"): starting an authorization; the callback is a page (callback.ts).
import { OAuthService } from "../../../gen/scheduling/v1/oauth_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";

export const oauthRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "POST", path: "/oauth/:provider/authorize", service: OAuthService, rpc: "startAuthorization", request: fromPath({ provider: "provider" }, "authorization"), required: ["purpose"],
    data: field("authorization"), message: "authorization started", summary: "Start connecting a Google, Microsoft or Zoom account (OAuth with PKCE)",
  },
];
