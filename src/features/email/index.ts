// What other features use of e-mail: a reminder's words and mail (the reminders feature sends them), and the mail setup.
export { composeReminderMail, mailContextOf, type MailSetup } from "./effect.js";
export { defaultReminderTexts, renderReminderMail } from "./reminder.js";
