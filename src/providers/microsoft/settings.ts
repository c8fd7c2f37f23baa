// Microsoft's settings (providers.md "Settings"): the operator's app registration, the tenant, and the identity platform's and Graph's roots.
import type { OAuthClientConfig } from "../shared/oauth.js";
import { clientSetting, endpointSetting, SettingError, type Env } from "../shared/settings.js";

/**
 * MICROSOFT_TENANT: who may sign in. `common` (work, school and personal accounts), `organizations` (work and
 * school), `consumers` (personal), or one organisation's tenant: its id (a GUID) or one of its domain names. It is a
 * path segment of the identity platform's URLs, so nothing else is taken.
 */
function tenantSetting(env: Env): string {
  const raw = env.MICROSOFT_TENANT;
  const value = raw === undefined || raw.trim() === "" ? "common" : raw.trim();
  const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const domain = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
  if (["common", "organizations", "consumers"].includes(value.toLowerCase()) || guid.test(value) || domain.test(value)) return value;
  throw new SettingError(`MICROSOFT_TENANT must be common, organizations, consumers, a tenant id or a tenant's domain name, got "${value}"`);
}

export function microsoftSettings(env: Env): OAuthClientConfig | undefined {
  const client = clientSetting(env, "MICROSOFT");
  // The identity platform's endpoints are per tenant: {login}/{tenant}/oauth2/v2.0/authorize and …/token.
  const identity = `${endpointSetting(env, "MICROSOFT_LOGIN_URL", "https://login.microsoftonline.com")}/${encodeURIComponent(tenantSetting(env))}/oauth2/v2.0`;
  const graphUrl = endpointSetting(env, "MICROSOFT_GRAPH_URL", "https://graph.microsoft.com");
  return (
    client && {
      ...client,
      authorizationUrl: `${identity}/authorize`,
      tokenUrl: `${identity}/token`,
      // The identity platform offers no token revocation (users and administrators revoke in their accounts).
      revocationUrl: undefined,
      // Graph's root: requests go to {root}/v1.0/….
      apiUrl: graphUrl,
    }
  );
}
