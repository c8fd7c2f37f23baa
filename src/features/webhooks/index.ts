// What other features use of webhooks: the body of a booking message, sending one message to a webhook, and switching a failing one off.
export { bookingMessageData, deliverToWebhook, switchOff } from "./effect.js";
