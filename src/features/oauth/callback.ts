// GET /oauth/<provider>/callback: takes the state (single use, bound to the account, 10 minutes), exchanges the code, and asks the person who approved to confirm whose scheduling account it joins; nothing is stored as a connection before they answer (confirm.ts).
import { createHash, randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type mongoose from "mongoose";
import { OAuthStateModel, type OAuthStateDoc } from "../../db/models/oauthState.js";
import { takeOnce } from "../../db/takeOnce.js";
import { UserModel, type UserDoc } from "../../db/models/user.js";
import { sealWithKeyId, unsealWithKeyId } from "../../domain/secretBox.js";
import { localeOf, type Locale } from "../../i18n/index.js";
import { errorText, logEvent } from "../../platform/log.js";
import { ProviderError, withDeadline, type OAuthClient, type OAuthSession, type ProviderIdentity, type TokenSet } from "../../providers/index.js";
import { stateId, type OAuthDeps } from "./service.js";
import { sendPage, word, type OAuthWord } from "./page.js";

/** What the purpose of an authorization is given to make or repair its connection (calendars, meetings). */
export interface AuthorizedAccount {
  userId: mongoose.Types.ObjectId;
  client: OAuthClient;
  /** A session over the new tokens: the connection stores `session.current()` once made. */
  session: OAuthSession;
  identity: ProviderIdentity;
  signal: AbortSignal;
}

/** What a purpose does with a confirmed authorization, and whether one of our accounts already holds a provider account's grant. */
export interface Purpose {
  connect(account: AuthorizedAccount): Promise<void>;
  /** Whether any account of ours keeps a grant of this provider account: a decline then must not revoke (a revocation ends the provider's whole grant). */
  grantHeld(provider: string, providerAccountId: string): Promise<boolean>;
}

/** Each purpose of an authorization (src/app/purposes.ts hands these in). */
export type PurposeHandlers = Readonly<Record<string, Purpose>>;

export interface CallbackDeps extends OAuthDeps {
  /** Exchange, identity and connection together get this long (several exchanges, like connecting CalDAV). */
  deadlineMs: number;
}

/** How long the person who approved has to answer the callback's question. */
const CONFIRM_TTL_MS = 10 * 60_000;

/** What waits in the state document for the person's answer, sealed. */
export interface PendingGrant {
  tokens: TokenSet;
  identity: ProviderIdentity;
}

function sealGrant(grant: PendingGrant, deps: OAuthDeps): string {
  return sealWithKeyId(JSON.stringify(grant), deps.secrets);
}

export function openGrant(sealed: string, deps: OAuthDeps): PendingGrant {
  return JSON.parse(unsealWithKeyId(sealed, deps.secrets)) as PendingGrant;
}

export function confirmationHash(confirmation: string): string {
  return createHash("sha256").update(confirmation).digest("hex");
}

/** A query or form value as one string (a repeated key is not ours to read). */
export function param(source: Request["query"] | URLSearchParams, name: string): string | undefined {
  const v = source instanceof URLSearchParams ? source.get(name) ?? undefined : source[name];
  return typeof v === "string" ? v : undefined;
}

/**
 * Takes the state: the one callback that finds it unused gets it (`usable`); an expired or used one is refused
 * like an unknown one, in its account's language when it was ours.
 */
async function takeState(state: string, provider: string, now: Date): Promise<{ usable: OAuthStateDoc | undefined; userId: mongoose.Types.ObjectId | undefined }> {
  const _id = stateId(state);
  // _id index. used_at null in the filter: single use, whatever the number of callbacks racing (src/db/takeOnce.ts).
  const doc = await takeOnce<OAuthStateDoc>(OAuthStateModel.collection, { _id, provider, used_at: null }, { $set: { used_at: now } });
  // The expiry is checked here as well: the embedded server keeps TTL indexes but deletes nothing.
  if (doc && doc.expires_at.getTime() > now.getTime()) return { usable: doc, userId: doc.user_id };
  // _id index: whose it was, for the page's language.
  const known = doc ?? (await OAuthStateModel.findOne({ _id, provider }, { user_id: 1 }).lean<Pick<OAuthStateDoc, "user_id">>());
  return { usable: undefined, userId: known?.user_id };
}

/** The scheduling account the authorization was started for: its language, and what the question names it by. */
export async function accountOf(userId: mongoose.Types.ObjectId | undefined): Promise<{ locale: Locale; user: Pick<UserDoc, "locale" | "full_name" | "email"> | null }> {
  // _id index.
  const user = userId ? await UserModel.findById(userId, { locale: 1, full_name: 1, email: 1 }).lean<Pick<UserDoc, "locale" | "full_name" | "email">>() : null;
  return { locale: localeOf(user?.locale), user };
}

type Failure = { status: number; key: Exclude<OAuthWord, `${string}Title` | "connectedText" | `confirm${string}` | `decline${string}` | "declinedText">; error?: string };

/** The code exchange and the provider account's identity, for a state that was ours; a failure to show otherwise. */
async function exchange(deps: CallbackDeps, req: Request, doc: OAuthStateDoc, client: OAuthClient): Promise<PendingGrant | Failure> {
  const callback = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (typeof v === "string") callback.set(k, v);
  try {
    return await withDeadline(deps.deadlineMs, async (signal) => {
      const verifier = unsealWithKeyId(doc.verifier_sealed, deps.secrets);
      const tokens = await client.exchangeCode(callback, param(req.query, "state") ?? "", verifier, doc.redirect_uri, signal);
      const identity = await client.profile.identify(client.pendingSession(tokens), signal);
      return { tokens, identity };
    });
  } catch (err) {
    if (err instanceof ProviderError && err.kind === "refused") return { status: 400, key: "codeText" };
    // The reason in words for the operator; never the query, which holds the code.
    logEvent("warn", "oauth callback failed", { provider: doc.provider, error: err instanceof ProviderError ? err.message : errorText(err) });
    if (err instanceof ProviderError) return { status: 502, key: "unreachableText" };
    throw err;
  }
}

/** The callback's GET: the question, or why there is none. */
export async function arrive(deps: CallbackDeps, purposes: PurposeHandlers, req: Request, res: Response, provider: string, displayName: string): Promise<void> {
  const state = param(req.query, "state");
  const taken = state === undefined || state === "" ? { usable: undefined, userId: undefined } : await takeState(state, provider, deps.access.clock.now());
  const doc = taken.usable;
  const { locale, user } = await accountOf(taken.userId);
  const fail = (f: Failure) => {
    logEvent("info", "oauth callback", { provider, outcome: f.key });
    sendPage(res, f.status, locale, word(locale, "failedTitle"), [word(locale, f.key, { provider: displayName, ...(f.error ? { error: f.error } : {}) })]);
  };
  if (!doc || !user || state === undefined) return fail({ status: 400, key: "stateText" });
  const error = param(req.query, "error");
  if (error !== undefined) return fail(error === "access_denied" ? { status: 400, key: "deniedText" } : { status: 400, key: "providerErrorText", error: error.slice(0, 64) });
  const client = deps.oauth.get(doc.provider);
  if (!client || !purposes[doc.purpose]) return fail({ status: 400, key: "notConfiguredText" });
  const grant = await exchange(deps, req, doc, client);
  if ("key" in grant) return fail(grant);
  // 256 bits for this page alone: the link's state is known to whoever started the authorization, this is not.
  const confirmation = randomBytes(32).toString("base64url");
  // _id index.
  await OAuthStateModel.updateOne(
    { _id: doc._id },
    { $set: { grant_sealed: sealGrant(grant, deps), confirm_hash: confirmationHash(confirmation), expires_at: new Date(deps.access.clock.nowMs() + CONFIRM_TTL_MS) } },
  );
  logEvent("info", "oauth callback", { provider, purpose: doc.purpose, outcome: "asked to confirm" });
  const names = { provider: displayName, providerAccount: grant.identity.email, name: user.full_name, email: user.email };
  sendPage(res, 200, locale, word(locale, "confirmTitle", names), [word(locale, "confirmText", names), word(locale, "confirmWarning", names)], {
    state,
    confirmation,
    confirmLabel: word(locale, "confirmButton", names),
    declineLabel: word(locale, "declineButton", names),
  });
}
