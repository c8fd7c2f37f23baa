// What src/app wires of reminders: the service, its REST rows and its effect kinds.
export { createReminderService } from "./service.js";
export { reminderRoutes } from "./routes.js";
export { createReminderKinds, planImported } from "./effects.js";
