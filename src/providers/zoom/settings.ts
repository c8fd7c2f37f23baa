// Zoom's settings (providers.md "Settings"): the operator's OAuth app and the endpoints, each with Zoom's real one as default.
import type { OAuthClientConfig } from "../shared/oauth.js";
import { clientSetting, endpointSetting, type Env } from "../shared/settings.js";

export function zoomSettings(env: Env): OAuthClientConfig | undefined {
  const client = clientSetting(env, "ZOOM");
  const tokenUrl = endpointSetting(env, "ZOOM_TOKEN_URL", "https://zoom.us/oauth/token");
  return (
    client && {
      ...client,
      authorizationUrl: endpointSetting(env, "ZOOM_AUTH_URL", "https://zoom.us/oauth/authorize"),
      tokenUrl,
      // providers.md: revocation sits beside the token endpoint ({root}/oauth/revoke).
      revocationUrl: tokenUrl.replace(/\/token$/, "/revoke"),
      apiUrl: endpointSetting(env, "ZOOM_API_URL", "https://api.zoom.us/v2"),
    }
  );
}
