// What the effect kinds need from the running service (set once by src/app/main.ts): the public address, outbound rules, the secrets keyring.
import type { Keyring } from "../domain/secretBox.js";

export interface EffectsContext {
  /** APP_URL, or the address the service listens on when it is not set. */
  appUrl(): string;
  /** OUTBOUND_ALLOW_PRIVATE: outbound requests may reach loopback and private addresses. */
  allowPrivate: boolean;
  /** Opens stored secrets (webhook signing secrets, calendar credentials). */
  secrets: Keyring;
}

let current: EffectsContext | undefined;

export function configureEffects(ctx: EffectsContext): void {
  current = ctx;
}

export function effectsContext(): EffectsContext {
  if (!current) throw new Error("effects are not configured (configureEffects is called at start-up)");
  return current;
}
