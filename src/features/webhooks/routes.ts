// REST rows of webhooks (docs/spec/integrations.md Webhooks) onto WebhookService.
import { WebhookService } from "../../../gen/scheduling/v1/webhook_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";

const byId = fromPath({ id: "id" });

export const webhookRoutes: RestRoute[] = [
  { kind: "rpc", method: "POST", path: "/webhooks", service: WebhookService, rpc: "createWebhook", status: 201, secret: true, required: ["url", "events"], data: field("webhook"), message: "webhook created", summary: "Create a webhook (the answer carries its secret)" },
  { kind: "rpc", method: "GET", path: "/webhooks", service: WebhookService, rpc: "listWebhooks", body: "none", data: field("webhooks"), message: "webhooks found", summary: "List webhooks, newest first, without secrets" },
  { kind: "rpc", method: "GET", path: "/webhooks/:id", service: WebhookService, rpc: "getWebhook", body: "none", request: byId, secret: true, data: field("webhook"), message: "webhook found", summary: "Get a webhook with its secret" },
  {
    kind: "rpc", method: "PATCH", path: "/webhooks/:id", service: WebhookService, rpc: "updateWebhook",
    request: fromPath({ id: "id" }, "webhook"),
    data: field("webhook"), message: "webhook updated", summary: "Change a webhook's url, events or active",
  },
  { kind: "rpc", method: "DELETE", path: "/webhooks/:id", service: WebhookService, rpc: "deleteWebhook", body: "none", request: byId, message: "webhook deleted", summary: "Delete a webhook" },
  {
    kind: "rpc", method: "GET", path: "/webhooks/:id/deliveries", service: WebhookService, rpc: "listWebhookDeliveries", body: "none", request: byId,
    data: field("deliveries"), message: "deliveries found", summary: "The webhook's last 100 delivery attempts, newest first",
  },
  {
    kind: "rpc", method: "POST", path: "/webhooks/:id/ping", service: WebhookService, rpc: "pingWebhook", body: "none", request: byId,
    data: field("delivery"), message: "ping sent", summary: "Send a ping message now; answers with that attempt",
  },
];
