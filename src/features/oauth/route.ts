// The route of /oauth/<provider>/callback (mounted by src/app): GET is the provider sending the browser back (callback.ts), POST the answer to its question (confirm.ts).
import type { RequestHandler } from "express";
import { oauthProfile } from "../../providers/index.js";
import { arrive, type CallbackDeps, type PurposeHandlers } from "./callback.js";
import { answerConfirmation } from "./confirm.js";

/** The callback route's handler for GET and POST (mounted by src/app at /oauth/:provider/callback). */
export function oauthCallback(deps: CallbackDeps, purposes: PurposeHandlers): RequestHandler {
  return (req, res, next) => {
    const provider = String(req.params.provider ?? "");
    const profile = oauthProfile(provider);
    if (!profile || (req.method !== "GET" && req.method !== "POST")) return next();
    const answer = req.method === "GET" ? arrive(deps, purposes, req, res, provider, profile.displayName) : answerConfirmation(deps, purposes, req, res, provider, profile.displayName);
    answer.catch(next);
  };
}
