// The eleven languages of pages, e-mails and the account's `locale`: a module of its own, so the pages' browser script reads it without the url rules and their Unicode tables (domain/user.ts).
export const LOCALES = ["en", "fr", "de", "es", "nl", "ru", "zh", "ja", "ar", "hi", "it"] as const;
export type Locale = (typeof LOCALES)[number];
