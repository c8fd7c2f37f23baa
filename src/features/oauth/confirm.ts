// POST /oauth/<provider>/callback: the answer to the callback's question. Confirmed, the purpose makes or repairs the connection; declined, the grant is revoked (unless one of our accounts already holds it) and nothing is stored.
import type { Request, Response } from "express";
import { OAuthStateModel, type OAuthStateDoc } from "../../db/models/oauthState.js";
import { takeOnce } from "../../db/takeOnce.js";
import { errorText, logEvent } from "../../platform/log.js";
import { readForm } from "../../platform/rest/form.js";
import { ProviderError, withDeadline, type OAuthClient } from "../../providers/index.js";
import { stateId } from "./service.js";
import { accountOf, confirmationHash, openGrant, param, type CallbackDeps, type PendingGrant, type PurposeHandlers } from "./callback.js";
import { sendPage, word } from "./page.js";

/** The form holds two values of at most 43 characters and the answer: anything longer is not our form. */
const FORM_MAX_BYTES = 2048;

/**
 * Takes the waiting grant: the one answer with the state and the confirmation the callback's page was given gets it
 * (`decided_at` null in the query: single use), within its time. The grant leaves the document as it is taken.
 */
async function takeGrant(state: string, confirmation: string, provider: string, now: Date): Promise<OAuthStateDoc | null> {
  // _id index. The grant is stored before the page that asks is shown, and leaves only here (src/db/takeOnce.ts).
  const doc = await takeOnce<OAuthStateDoc>(
    OAuthStateModel.collection,
    { _id: stateId(state), provider, decided_at: null, confirm_hash: confirmationHash(confirmation) },
    { $set: { decided_at: now, grant_sealed: null } },
  );
  return doc && doc.grant_sealed !== null && doc.expires_at.getTime() > now.getTime() ? doc : null;
}

/** Declined: the new tokens are revoked at the provider, unless an account of ours holds that provider account (its grant would end too). */
async function decline(deps: CallbackDeps, client: OAuthClient, grant: PendingGrant, held: boolean): Promise<void> {
  if (held) return;
  try {
    await withDeadline(deps.deadlineMs, (signal) => client.revoke(grant.tokens.refresh_token ?? grant.tokens.access_token, signal));
  } catch (err) {
    logEvent("warn", "revocation of a declined authorization failed; its tokens are forgotten anyway", { provider: client.provider, error: err instanceof ProviderError ? err.message : errorText(err) });
  }
}

/** The answer to the callback's question. */
export async function answerConfirmation(deps: CallbackDeps, purposes: PurposeHandlers, req: Request, res: Response, provider: string, displayName: string): Promise<void> {
  const form = await readForm(req, FORM_MAX_BYTES);
  const state = form ? param(form, "state") : undefined;
  const confirmation = form ? param(form, "confirmation") : undefined;
  const decision = form ? param(form, "decision") : undefined;
  const doc = state && confirmation && (decision === "confirm" || decision === "decline") ? await takeGrant(state, confirmation, provider, deps.access.clock.now()) : null;
  const { locale } = await accountOf(doc?.user_id);
  const client = doc ? deps.oauth.get(doc.provider) : undefined;
  const purpose = doc ? purposes[doc.purpose] : undefined;
  const say = (status: number, title: "failedTitle" | "connectedTitle", text: "stateText" | "declinedText" | "connectedText" | "unreachableText" | "codeText") =>
    sendPage(res, status, locale, word(locale, title), [word(locale, text, { provider: displayName })]);
  if (!doc || !client || !purpose || doc.grant_sealed === null) {
    logEvent("info", "oauth confirmation", { provider, outcome: "unknown, expired or used" });
    return say(400, "failedTitle", "stateText");
  }
  const grant = openGrant(doc.grant_sealed, deps);
  if (decision === "decline") {
    await decline(deps, client, grant, await purpose.grantHeld(provider, grant.identity.id));
    logEvent("info", "oauth confirmation", { provider, purpose: doc.purpose, outcome: "declined" });
    return say(200, "failedTitle", "declinedText");
  }
  try {
    await withDeadline(deps.deadlineMs, (signal) => purpose.connect({ userId: doc.user_id, client, session: client.pendingSession(grant.tokens), identity: grant.identity, signal }));
  } catch (err) {
    logEvent("warn", "oauth connection failed", { provider, error: err instanceof ProviderError ? err.message : errorText(err) });
    if (err instanceof ProviderError) return say(err.kind === "refused" ? 400 : 502, "failedTitle", err.kind === "refused" ? "codeText" : "unreachableText");
    throw err;
  }
  logEvent("info", "oauth confirmation", { provider, purpose: doc.purpose, outcome: "connected" });
  if (doc.return_url !== null) {
    const back = new URL(doc.return_url);
    back.searchParams.set("connected", provider);
    res.setHeader("Cache-Control", "no-store");
    return res.redirect(303, back.href);
  }
  say(200, "connectedTitle", "connectedText");
}
