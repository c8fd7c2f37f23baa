// GET /oauth/<provider>/callback: takes the state (single use, bound to the account, 10 minutes), exchanges the code, lets the purpose make or repair the connection, and answers a page or a redirect.
import type { Request, RequestHandler, Response } from "express";
import type mongoose from "mongoose";
import { OAuthStateModel, type OAuthStateDoc } from "../../db/models/oauthState.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { unsealWithKeyId } from "../../domain/secretBox.js";
import { escapeHtml } from "../../domain/html.js";
import { direction, fill, localeOf, type Locale } from "../../i18n/index.js";
import { oauthMessages } from "../../i18n/oauth.js";
import { errorText, logEvent } from "../../platform/log.js";
import { CalendarSourceError, oauthProfile, withDeadline, type OAuthClient, type OAuthSession, type ProviderIdentity } from "../../providers/index.js";
import { stateId, type OAuthDeps } from "./service.js";

/** What the purpose of an authorization is given to make or repair its connection (calendars, meetings). */
export interface AuthorizedAccount {
  userId: mongoose.Types.ObjectId;
  client: OAuthClient;
  /** A session over the new tokens: the connection stores `session.current()` once made. */
  session: OAuthSession;
  identity: ProviderIdentity;
  signal: AbortSignal;
}

/** Each purpose's way to make or repair a connection from an authorization (src/app hands these in). */
export type PurposeHandlers = Readonly<Record<string, (account: AuthorizedAccount) => Promise<void>>>;

export interface CallbackDeps extends OAuthDeps {
  /** Exchange, identity and connection together get this long (several exchanges, like connecting CalDAV). */
  deadlineMs: number;
}

type Outcome = { status: number; key: "stateText" | "deniedText" | "codeText" | "providerErrorText" | "unreachableText" | "notConfiguredText" | "connectedText"; error?: string };

/** A message of the callback page in the account's language. */
function word(locale: Locale, key: keyof (typeof oauthMessages)["en"], params: Record<string, string> = {}): string {
  return fill(oauthMessages[locale][key], params);
}

/** A query value as one string (a repeated key is not ours to read). */
function param(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * Takes the state: the one callback that finds it unused gets it (`usable`); an expired or used one is refused
 * like an unknown one, in its account's language when it was ours.
 */
async function takeState(state: string, provider: string, now: Date): Promise<{ usable: OAuthStateDoc | undefined; userId: mongoose.Types.ObjectId | undefined }> {
  const _id = stateId(state);
  // _id index. used_at null in the query: single use, whatever the number of callbacks racing.
  const doc = await OAuthStateModel.findOneAndUpdate({ _id, provider, used_at: null }, { $set: { used_at: now } }, { new: false }).lean<OAuthStateDoc>();
  // The expiry is checked here as well: the embedded server keeps TTL indexes but deletes nothing.
  if (doc && doc.expires_at.getTime() > now.getTime()) return { usable: doc, userId: doc.user_id };
  // _id index: whose it was, for the page's language.
  const known = doc ?? (await OAuthStateModel.findOne({ _id, provider }, { user_id: 1 }).lean<Pick<OAuthStateDoc, "user_id">>());
  return { usable: undefined, userId: known?.user_id };
}

function page(res: Response, status: number, locale: Locale, title: string, text: string): void {
  res.status(status);
  res.setHeader("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.type("html");
  res.send(
    `<!doctype html><html lang="${locale}" dir="${direction(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1><p id="outcome">${escapeHtml(text)}</p></main></body></html>`,
  );
}

/** The code exchange and the connection, for a state that was ours; the outcome to show. */
async function finish(deps: CallbackDeps, purposes: PurposeHandlers, req: Request, doc: OAuthStateDoc): Promise<Outcome> {
  const error = param(req, "error");
  if (error !== undefined) return error === "access_denied" ? { status: 400, key: "deniedText" } : { status: 400, key: "providerErrorText", error: error.slice(0, 64) };
  const client = deps.oauth.get(doc.provider);
  const handler = purposes[doc.purpose];
  if (!client || !handler) return { status: 400, key: "notConfiguredText" };
  const callback = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (typeof v === "string") callback.set(k, v);
  try {
    await withDeadline(deps.deadlineMs, async (signal) => {
      const verifier = unsealWithKeyId(doc.verifier_sealed, deps.secrets);
      const tokens = await client.exchangeCode(callback, param(req, "state") ?? "", verifier, doc.redirect_uri, signal);
      const session = client.pendingSession(tokens);
      const identity = await client.profile.identify(session, signal);
      await handler({ userId: doc.user_id, client, session, identity, signal });
    });
    return { status: 303, key: "connectedText" };
  } catch (err) {
    if (err instanceof CalendarSourceError && err.kind === "refused") return { status: 400, key: "codeText" };
    // The reason in words for the operator; never the query, which holds the code.
    logEvent("warn", "oauth callback failed", { provider: doc.provider, error: err instanceof CalendarSourceError ? err.message : errorText(err) });
    if (err instanceof CalendarSourceError) return { status: 502, key: "unreachableText" };
    throw err;
  }
}

/** The callback route's handler (mounted by src/app at /oauth/:provider/callback). */
export function oauthCallback(deps: CallbackDeps, purposes: PurposeHandlers): RequestHandler {
  return (req, res, next) => {
    const provider = String(req.params.provider ?? "");
    const profile = oauthProfile(provider);
    if (!profile) return next();
    void (async () => {
      const state = param(req, "state");
      const taken = state === undefined || state === "" ? { usable: undefined, userId: undefined } : await takeState(state, provider, new Date());
      const doc = taken.usable;
      // _id index: the account's locale, for the page.
      const user = taken.userId ? await UserModel.findById(taken.userId, { locale: 1 }).lean<Pick<UserDoc, "locale">>() : null;
      const locale = localeOf(user?.locale);
      const say = (key: Outcome["key"], error?: string) => word(locale, key, { provider: profile.displayName, ...(error ? { error } : {}) });
      if (!doc || !user) {
        logEvent("info", "oauth callback", { provider, outcome: "unknown state" });
        return page(res, 400, locale, word(locale, "failedTitle"), say("stateText"));
      }
      const outcome = await finish(deps, purposes, req, doc);
      logEvent("info", "oauth callback", { provider, purpose: doc.purpose, outcome: outcome.key });
      if (outcome.key !== "connectedText") return page(res, outcome.status, locale, word(locale, "failedTitle"), say(outcome.key, outcome.error));
      if (doc.return_url !== null) {
        const back = new URL(doc.return_url);
        back.searchParams.set("connected", provider);
        res.setHeader("Cache-Control", "no-store");
        return res.redirect(303, back.href);
      }
      return page(res, 200, locale, word(locale, "connectedTitle"), say("connectedText"));
    })().catch(next);
  };
}
