// WebhookService: the account's webhooks (create with a whsec_ secret, list, get, update, delete), their deliveries, and ping.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ListValue } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { WebhookService, type WebhookDeliverySchema, type WebhookSchema } from "../../../gen/scheduling/v1/webhook_pb.js";
import { EffectAttemptModel, type EffectAttemptDoc } from "../../db/models/effect.js";
import type { UserDoc } from "../../db/models/user.js";
import { WebhookModel, type WebhookDoc } from "../../db/models/webhook.js";
import { freePlaces, insertInFreePlace } from "../../db/places.js";
import { notFound, REASONS, refusal, requireFields, requireObject } from "../../domain/errors.js";
import { sealWithKeyId, unsealWithKeyId } from "../../domain/secretBox.js";
import { checkWebhookEvents, checkWebhookUrlForm, WEBHOOKS_PER_ACCOUNT } from "../../domain/webhook.js";
import { deliverToWebhook, switchOff, type WebhookOutbound } from "./effect.js";
import { recordAttempt } from "../../outbox/record.js";
import { checkRequestUrl } from "../../providers/index.js";
import { newWebhookSecret } from "./deliver.js";
import type { Access } from "../accounts/index.js";
import { objectIdOf } from "../../db/ids.js";

type WebhookMessage = MessageInitShape<typeof WebhookSchema>;

/** Spec: the last 100 attempts. */
const DELIVERIES_SHOWN = 100;

function presentWebhook(h: WebhookDoc, secret?: string): WebhookMessage {
  return { id: h._id.toHexString(), url: h.url, events: h.events, active: h.active, createdAt: h.created_at.toISOString(), secret };
}

function presentDelivery(a: EffectAttemptDoc): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    id: a._id.toHexString(),
    messageId: a.effect_id,
    eventType: a.event_type,
    attempt: a.attempt,
    statusCode: a.status_code ?? undefined,
    error: a.error ?? undefined,
    durationMs: a.duration_ms,
    attemptedAt: a.attempted_at.toISOString(),
  };
}

/** The URL's form, then where it leads: a private or reserved address is refused unless OUTBOUND_ALLOW_PRIVATE. */
async function checkUrl(raw: string, allowPrivate: boolean): Promise<string> {
  const url = checkWebhookUrlForm(raw);
  await checkRequestUrl("url", url, { allowPrivate });
  return url;
}

function eventsOf(list: ListValue): string[] {
  return checkWebhookEvents(list.values.map((v) => (v.kind.case === "stringValue" ? v.kind.value : null)));
}

async function ownWebhook(host: Readonly<UserDoc>, id: string): Promise<WebhookDoc> {
  const _id = objectIdOf(id);
  // _id index; the owner test makes another account's webhook as unknown as a missing one.
  const hook = _id === null ? null : await WebhookModel.findOne({ _id, user_id: host._id }).lean<WebhookDoc>();
  if (!hook) throw notFound("webhook not found");
  return hook;
}

/**
 * The places a new webhook of the account may take: those below the cap that no webhook holds, the range shortened
 * by one for each webhook an earlier version made without a place (the model's `place`), so they count too.
 */
async function freeWebhookPlaces(userId: mongoose.Types.ObjectId): Promise<number[]> {
  // (user_id, created_at) index.
  const held = await WebhookModel.find({ user_id: userId }, { place: 1, _id: 0 }).lean<Pick<WebhookDoc, "place">[]>();
  const placed = held.flatMap((h) => (typeof h.place === "number" ? [h.place] : []));
  return freePlaces(placed, Math.max(0, WEBHOOKS_PER_ACCOUNT - (held.length - placed.length)));
}

export function createWebhookService(access: Access, outbound: WebhookOutbound): ServiceImpl<typeof WebhookService> {
  return {
    async createWebhook(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.webhook;
      requireFields("webhook", { url: input?.url, events: input?.events });
      const events = eventsOf(input?.events as ListValue);
      const url = await checkUrl(input?.url as string, outbound.allowPrivate);
      const secret = newWebhookSecret();
      const now = access.clock.now();
      const doc = await insertInFreePlace(() => freeWebhookPlaces(host._id), WEBHOOKS_PER_ACCOUNT, async (place) => {
        const hook: WebhookDoc = {
          _id: new mongoose.Types.ObjectId(),
          user_id: host._id,
          url,
          events,
          active: input?.active ?? true,
          secret_sealed: sealWithKeyId(secret, outbound.secrets),
          place,
          deactivated_reason: null,
          created_at: now,
          updated_at: now,
        };
        await WebhookModel.collection.insertOne(hook);
        return hook;
      });
      if (doc === null) throw refusal(REASONS.limitReached, `an account may have at most ${WEBHOOKS_PER_ACCOUNT} webhooks`);
      return { webhook: presentWebhook(doc, secret) };
    },

    async listWebhooks(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const hooks = await WebhookModel.find({ user_id: host._id }).sort({ created_at: -1, _id: -1 }).lean<WebhookDoc[]>();
      return { webhooks: hooks.map((h) => presentWebhook(h)) };
    },

    async getWebhook(req, ctx) {
      const host = await access.authenticate(ctx);
      const hook = await ownWebhook(host, req.id);
      return { webhook: presentWebhook(hook, unsealWithKeyId(hook.secret_sealed, outbound.secrets)) };
    },

    async updateWebhook(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.webhook;
      requireObject("webhook", input);
      const hook = await ownWebhook(host, req.id);
      const changes: Partial<Pick<WebhookDoc, "url" | "events" | "active" | "deactivated_reason">> = {};
      if (input.events !== undefined) changes.events = eventsOf(input.events);
      if (input.url !== undefined) changes.url = await checkUrl(input.url, outbound.allowPrivate);
      if (input.active !== undefined) {
        changes.active = input.active;
        changes.deactivated_reason = null;
      }
      if (Object.keys(changes).length > 0) {
        // _id index, owner checked again so a concurrent delete stays a 404.
        const r = await WebhookModel.updateOne({ _id: hook._id, user_id: host._id }, { $set: { ...changes, updated_at: access.clock.now() } });
        if (r.matchedCount === 0) throw notFound("webhook not found");
      }
      return { webhook: presentWebhook({ ...hook, ...changes }) };
    },

    async deleteWebhook(req, ctx) {
      const host = await access.authenticate(ctx);
      const hook = await ownWebhook(host, req.id);
      // Messages still owed to it fail at their next try ("webhook was deleted") without retries.
      await WebhookModel.deleteOne({ _id: hook._id, user_id: host._id });
      return {};
    },

    async listWebhookDeliveries(req, ctx) {
      const host = await access.authenticate(ctx);
      const hook = await ownWebhook(host, req.id);
      // (user_id, webhook_id, attempted_at desc) index: on the account's shard.
      const attempts = await EffectAttemptModel.find({ user_id: host._id, webhook_id: hook._id })
        .sort({ attempted_at: -1, _id: -1 })
        .limit(DELIVERIES_SHOWN)
        .lean<EffectAttemptDoc[]>();
      return { deliveries: attempts.map(presentDelivery) };
    },

    async pingWebhook(req, ctx) {
      const host = await access.authenticate(ctx);
      const hook = await ownWebhook(host, req.id);
      const now = access.clock.now();
      // Sent at once, outside the queue, and not retried: the answer is the try itself. An inactive webhook may
      // be pinged too, so a host can check a fixed receiver before turning it on again.
      const message = { type: "ping", timestamp: now.toISOString(), data: { webhook_id: hook._id.toHexString() } };
      const id = `msg_${new mongoose.Types.ObjectId().toHexString()}`;
      const started = performance.now();
      const result = await deliverToWebhook(hook, id, JSON.stringify(message), outbound, ctx.signal);
      const attempt = await recordAttempt({ _id: id, kind: "webhook", user_id: host._id, webhook_id: hook._id, payload: message }, 1, result, Math.round(performance.now() - started), access.clock.now());
      // A receiver that answers 410 is gone for a ping as for any message (integrations.md: a 410 sets active false).
      if (!result.ok && result.permanent) await switchOff(hook._id.toHexString(), result.error, access.clock.now());
      return { delivery: presentDelivery(attempt) };
    },
  };
}
