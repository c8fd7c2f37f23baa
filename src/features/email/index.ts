// What other features use of e-mail: a reminder's words and mail (the reminders feature sends them), the mail setup, and sending one mail (the host's notices).
export { composeReminderMail, mailContextOf, sendLogged, type MailSetup } from "./effect.js";
export { mailSender, type OutgoingMail } from "./smtp.js";
export { defaultReminderTexts, renderReminderMail } from "./reminder.js";
