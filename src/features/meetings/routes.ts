// REST rows of the video-meeting integration (docs/spec/integrations.md "Video meetings") onto IntegrationService.
import { IntegrationService } from "../../../gen/scheduling/v1/integration_pb.js";
import { responseField as field, type RestRoute } from "../../platform/rest/table.js";

export const integrationRoutes: RestRoute[] = [
  {
    kind: "rpc", method: "GET", path: "/integrations", service: IntegrationService, rpc: "listIntegrations", body: "none",
    data: field("integrations"), message: "integrations found", summary: "List connected integrations",
  },
  {
    kind: "rpc", method: "PUT", path: "/integrations/conference", service: IntegrationService, rpc: "connectConference", required: ["provider"],
    data: field("integration"), message: "integration connected", summary: "Connect the video-meeting provider (Jitsi)",
  },
  {
    kind: "rpc", method: "DELETE", path: "/integrations/conference", service: IntegrationService, rpc: "disconnectConference", body: "none",
    message: "integration disconnected", summary: "Disconnect the video-meeting provider",
  },
];
