// The whole REST table of /api/v1: every row of every service, in one list.
import type { RestRoute } from "../table.js";
import { sessionOnlyRoutes, userRoutes } from "./users.js";
import { eventRoutes } from "./events.js";
import { questionRoutes } from "./questions.js";
import { bookingRoutes } from "./bookings.js";
import { webhookRoutes } from "./webhooks.js";

export const restRoutes: RestRoute[] = [...userRoutes, ...eventRoutes, ...questionRoutes, ...bookingRoutes, ...webhookRoutes, ...sessionOnlyRoutes];
