// The oauth_states collection: authorizations under way, each bound to the account that asked, single use, for 10 minutes; after the callback, the grant waiting for the person's confirmation.
import mongoose, { Schema } from "mongoose";

/** A state as stored; written whole (insertOne), so it is declared rather than inferred. */
export interface OAuthStateDoc {
  /** SHA-256 of the state (hex): the state itself travels through the browser and is never stored. */
  _id: string;
  user_id: mongoose.Types.ObjectId;
  provider: string;
  /** calendar or conference */
  purpose: string;
  return_url: string | null;
  /** The PKCE code_verifier, sealed (src/domain/secretBox.ts): with the code it is worth a grant. */
  verifier_sealed: string;
  /** The redirect_uri of the authorization request: the token request must send the same bytes. */
  redirect_uri: string;
  created_at: Date;
  /** TTL index; queries check it too, since the embedded server keeps TTL indexes but deletes nothing. */
  expires_at: Date;
  /** Set by the one callback that takes the state; a second one finds it used. */
  used_at: Date | null;
  /**
   * After the callback, until the person answers its question: the provider account's tokens and identity, sealed.
   * Nothing is connected before they confirm (someone else may have approved a link meant for the host).
   */
  grant_sealed: string | null;
  /** SHA-256 of the confirmation the callback's page alone was given: whoever started the authorization never sees it. */
  confirm_hash: string | null;
  /** Set by the one answer that takes the grant (confirm or decline). */
  decided_at: Date | null;
}

const stateSchema = new Schema<OAuthStateDoc>(
  {
    _id: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    provider: { type: String, required: true },
    purpose: { type: String, required: true },
    return_url: { type: String, default: null },
    verifier_sealed: { type: String, required: true },
    redirect_uri: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    used_at: { type: Date, default: null },
    grant_sealed: { type: String, default: null },
    confirm_hash: { type: String, default: null },
    decided_at: { type: Date, default: null },
  },
  { collection: "oauth_states", versionKey: false },
);

// _id: the callback takes its state by id. expires_at: TTL, states leave once expired.
stateSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export const OAuthStateModel = mongoose.model<OAuthStateDoc>("OAuthState", stateSchema);
