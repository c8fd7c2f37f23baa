// The pages of an authorization's return (GET and POST /oauth/<provider>/callback): one plain, self-contained HTML page in the account's language, with the confirmation form when one is asked.
import type { Response } from "express";
import { escapeHtml } from "../../domain/html.js";
import { direction, fill, type Locale } from "../../i18n/index.js";
import { oauthMessages } from "../../i18n/oauth.js";

export type OAuthWord = keyof (typeof oauthMessages)["en"];

/** A message of the page in the account's language. */
export function word(locale: Locale, key: OAuthWord, params: Record<string, string> = {}): string {
  return fill(oauthMessages[locale][key], params);
}

/** The question the callback asks before anything is stored: its hidden fields and the two answers. */
export interface ConfirmForm {
  state: string;
  confirmation: string;
  confirmLabel: string;
  declineLabel: string;
}

const STYLE = "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}form{display:flex;gap:1rem;margin-top:2rem}button{font:inherit;padding:.5rem 1.25rem}";

/**
 * Sends the page: no script, nothing from elsewhere, not framable, not cached, no referrer to other sites (its
 * address may hold the code and the state). A form may post only to this service.
 */
export function sendPage(res: Response, status: number, locale: Locale, title: string, paragraphs: readonly string[], form?: ConfirmForm): void {
  res.status(status);
  res.setHeader("Content-Security-Policy", `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  // Never sent elsewhere (its address holds the code and the state); same-origin, not no-referrer: with no-referrer a
  // browser sends the form's post with `Origin: null`, which the cross-origin write rule rightly refuses.
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("Cache-Control", "no-store");
  res.type("html");
  const text = paragraphs.map((p, i) => `<p${i === 0 ? ' id="outcome"' : ""}>${escapeHtml(p)}</p>`).join("");
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const buttons = form
    ? `<form method="post">${hidden("state", form.state)}${hidden("confirmation", form.confirmation)}` +
      `<button type="submit" name="decision" value="confirm" id="confirm">${escapeHtml(form.confirmLabel)}</button>` +
      `<button type="submit" name="decision" value="decline" id="decline">${escapeHtml(form.declineLabel)}</button></form>`
    : "";
  res.send(
    `<!doctype html><html lang="${locale}" dir="${direction(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1>${text}${buttons}</main></body></html>`,
  );
}
