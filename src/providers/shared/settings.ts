// What providers' own settings readers share (each provider folder reads its environment names; src/app/config.ts only composes them): an endpoint, a client's two halves, and the error that names the setting.
/** The process environment, or any map of settings names to values (tests). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A setting that cannot be used: the message names it (src/app/config.ts turns it into a ConfigError, which stops the start). */
export class SettingError extends Error {}

/** An endpoint setting: an http(s) URL without a trailing slash (the operator's, so any address is allowed). */
export function endpointSetting(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  const value = raw === undefined || raw.trim() === "" ? fallback : raw.trim();
  const url = URL.parse(value);
  if (url === null || (url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") throw new SettingError(`${name} must be an http(s) URL, got "${value}"`);
  return value.replace(/\/+$/, "");
}

/** `<PREFIX>_CLIENT_ID` and `<PREFIX>_CLIENT_SECRET`: both or neither (then the provider answers 422 `<provider> is not configured`). */
export function clientSetting(env: Env, prefix: string): { clientId: string; clientSecret: string } | undefined {
  const id = env[`${prefix}_CLIENT_ID`]?.trim() ?? "";
  const secret = env[`${prefix}_CLIENT_SECRET`]?.trim() ?? "";
  if (id === "" && secret === "") return undefined;
  // The secret may not be named in the message: it is one.
  if (id === "" || secret === "") throw new SettingError(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET must be set together`);
  return { clientId: id, clientSecret: secret };
}
