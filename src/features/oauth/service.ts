// OAuthService: starting an authorization (POST /oauth/<provider>/authorize): the provider's URL with PKCE and a state bound to the account, single use, for 10 minutes.
import { createHash } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type mongoose from "mongoose";
import { OAuthService } from "../../../gen/scheduling/v1/oauth_pb.js";
import { OAuthStateModel, type OAuthStateDoc } from "../../db/models/oauthState.js";
import { invalid, notInList, requireFields } from "../../domain/errors.js";
import { sealWithKeyId, type Keyring } from "../../domain/secretBox.js";
import { oauthProfile, oauthProfiles, type OAuthClient } from "../../providers/index.js";
import type { Access } from "../accounts/index.js";

/** How long a host has to finish authorizing (providers.md). */
const STATE_TTL_MS = 10 * 60_000;
const RETURN_URL_MAX = 2000;

export interface OAuthDeps {
  access: Access;
  appUrl(): string;
  /** The operator's OAuth clients by provider; a provider that connects through OAuth but is missing is not configured. */
  oauth: ReadonlyMap<string, OAuthClient>;
  secrets: Keyring;
  /** CORS_ORIGINS: origins besides APP_URL's a host may be sent back to. */
  corsOrigins: readonly string[];
}

/** The redirect_uri of a provider: the same bytes in the authorization and the token request. */
function redirectUriOf(appUrl: string, provider: string): string {
  return `${appUrl}/oauth/${provider}/callback`;
}

/** The id a state is stored under: its SHA-256, so the database never holds a value that finishes an authorization. */
export function stateId(state: string): string {
  return createHash("sha256").update(state).digest("hex");
}

/** A return_url on APP_URL's origin or one of CORS_ORIGINS (never "*": that would make us an open redirect). */
function checkReturnUrl(raw: string | undefined, deps: OAuthDeps): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  const url = raw.length <= RETURN_URL_MAX ? URL.parse(raw.trim()) : null;
  const allowed = new Set([URL.parse(deps.appUrl())?.origin, ...deps.corsOrigins.filter((o) => o !== "*")]);
  if (url === null || (url.protocol !== "https:" && url.protocol !== "http:") || !allowed.has(url.origin)) throw invalid("return_url is not allowed");
  return url.href;
}

export function createOAuthService(deps: OAuthDeps): ServiceImpl<typeof OAuthService> {
  return {
    async startAuthorization(req, ctx) {
      const host = await deps.access.authenticate(ctx);
      const provider = req.provider;
      const profile = oauthProfile(provider);
      if (!profile) notInList("provider", oauthProfiles().map((p) => p.provider), provider);
      requireFields("authorization", { purpose: req.authorization?.purpose });
      const client = deps.oauth.get(provider);
      if (!client) throw invalid(`${provider} is not configured`, "provider");
      const purpose = req.authorization?.purpose ?? "";
      if (!profile.purposes.includes(purpose)) notInList("purpose", profile.purposes, purpose);
      const returnUrl = checkReturnUrl(req.authorization?.returnUrl, deps);
      const redirectUri = redirectUriOf(deps.appUrl(), provider);
      const { url, state, codeVerifier } = await client.authorizationRequest(redirectUri);
      const now = deps.access.clock.now();
      const expiresAt = new Date(now.getTime() + STATE_TTL_MS);
      const doc: OAuthStateDoc = {
        _id: stateId(state),
        user_id: host._id,
        provider,
        purpose,
        return_url: returnUrl,
        verifier_sealed: sealWithKeyId(codeVerifier, deps.secrets),
        redirect_uri: redirectUri,
        created_at: now,
        expires_at: expiresAt,
        used_at: null,
        grant_sealed: null,
        confirm_hash: null,
        decided_at: null,
      };
      await (OAuthStateModel.collection as unknown as mongoose.mongo.Collection<OAuthStateDoc>).insertOne(doc);
      return { authorization: { authorizationUrl: url, expiresAt: expiresAt.toISOString() } };
    },
  };
}
