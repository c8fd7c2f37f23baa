// Google's settings (providers.md "Settings"): the operator's OAuth client and the endpoints, each with Google's real one as default.
import type { OAuthClientConfig } from "../shared/oauth.js";
import { clientSetting, endpointSetting, type Env } from "../shared/settings.js";

export function googleSettings(env: Env): OAuthClientConfig | undefined {
  const client = clientSetting(env, "GOOGLE");
  return (
    client && {
      ...client,
      authorizationUrl: endpointSetting(env, "GOOGLE_AUTH_URL", "https://accounts.google.com/o/oauth2/v2/auth"),
      tokenUrl: endpointSetting(env, "GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token"),
      revocationUrl: endpointSetting(env, "GOOGLE_REVOKE_URL", "https://oauth2.googleapis.com/revoke"),
      apiUrl: endpointSetting(env, "GOOGLE_API_URL", "https://www.googleapis.com"),
    }
  );
}
